"""A Prometheus beside the sandbox: it scrapes every broker's ``/metrics`` on a fixed interval and
answers the two read endpoints of Prometheus' HTTP API that lbctl asks (``/api/v1/series`` and
``/api/v1/query_range``), on every broker's port, so that ``lbctl snapshot from-prometheus`` and
``--prometheus-url`` can be tried against the sandbox without installing a Prometheus.

Why here: the sandbox already writes the exposition a real Prometheus would scrape
(:mod:`lbctl.sandbox.metrics`); without a query API a newcomer's ``--prometheus-url`` against it
ended in ``404 Not Found`` on ``/api/v1/series``. This is not a PromQL engine: it evaluates what
lbctl sends — a vector selector (``=``, ``!=``, ``=~``, ``!~`` matchers), bare or inside
``last_over_time(…[window])`` — and refuses anything else with Prometheus' 400 ``bad_data``.

As Prometheus does: each scraped sample gets the target's ``instance`` (``host:port``) and
``job`` labels; samples are stamped with the wall clock (a Prometheus scrapes on its own clock,
not the cluster's, which ``--speed`` runs faster); a bare selector looks back 5 minutes
(``--query.lookback-delta``); a range query evaluates at ``start``, ``start + step``, … ≤ ``end``
and leaves out series with no sample in the window; values are written as Go's
``strconv.FormatFloat(v, 'f', -1, 64)`` (no exponent), times as seconds.
"""

from __future__ import annotations

import math
import re
import time
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lbctl.sandbox.server import TestCluster

#: seconds between scrapes (a Prometheus job's common ``scrape_interval``)
SCRAPE_INTERVAL = 15.0
#: how much history is kept (Prometheus keeps 15 days; the sandbox an hour, to bound memory)
RETENTION = 3600.0
#: samples kept at most (16 bytes each), so that a sandbox of thousands of bundles stays small
MAX_SAMPLES = 4_000_000
#: ``--query.lookback-delta``'s default: how far back a bare selector finds a sample (ms)
LOOKBACK_MS = 5 * 60 * 1000
#: points one range query may return per series, as Prometheus refuses more
MAX_POINTS = 11000
JOB = "pulsar"

Labels = tuple[tuple[str, str], ...]
_LINE = re.compile(r'^([A-Za-z_:][A-Za-z0-9_:]*)(\{(.*)\})?\s+(\S+)(?:\s+\d+)?$')
_PAIR = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)')
_QUERY = re.compile(r'^\s*last_over_time\s*\(\s*(.+)\[\s*(\d+(?:\.\d+)?)(ms|s|m|h)\s*\]\s*\)\s*$',
                    re.S)
_UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000}


class BadData(ValueError):
    """A request Prometheus answers with 400 ``bad_data``."""


def _unescape(v: str) -> str:
    return v.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def _pairs(text: str) -> list[tuple[str, str, str]]:
    """``k="v",k!="v",…`` as (label, operator, value); a malformed list raises BadData."""
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _PAIR.match(text, pos)
        if m is None:
            raise BadData(f"parse error: unexpected character in label matchers: {text[pos:]!r}")
        out.append((m.group(1), m.group(2), _unescape(m.group(3))))
        pos = m.end()
    return out


def parse_exposition(text: str) -> list[tuple[str, Labels, float]]:
    """The samples of a text exposition (comments and malformed lines left out)."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        try:
            value = float(m.group(4))
            labels = tuple((k, v) for k, _, v in _pairs(m.group(3) or ""))
        except (ValueError, BadData):
            continue
        out.append((m.group(1), labels, value))
    return out


Matcher = Callable[[dict[str, str]], bool]


def selector(text: str) -> Matcher:
    """A vector selector ``name{matchers}`` (or ``{__name__="…",…}``) as a predicate over a
    series' labels (``__name__`` included)."""
    text = text.strip()
    m = re.match(r'^([A-Za-z_:][A-Za-z0-9_:]*)?\s*(?:\{(.*)\})?$', text, re.S)
    if m is None or (m.group(1) is None and m.group(2) is None):
        raise BadData(f"parse error: not a vector selector: {text!r}")
    tests = [("__name__", "=", m.group(1))] if m.group(1) else []
    tests += _pairs(m.group(2) or "")
    if not any(op in ("=", "=~") and val for _, op, val in tests):
        raise BadData("vector selector must contain at least one non-empty matcher")
    compiled = []
    for k, op, v in tests:
        try:
            rx = re.compile(f"(?:{v})\\Z", re.S) if op in ("=~", "!~") else None
        except re.error as e:
            raise BadData(f"invalid regular expression {v!r}: {e}") from None
        compiled.append((k, op, v, rx))

    def test(labels: dict[str, str]) -> bool:
        for k, op, v, rx in compiled:
            have = labels.get(k, "")
            if op == "=" and have != v or op == "!=" and have == v:
                return False
            if rx is not None and (rx.match(have) is None) == (op == "=~"):
                return False
        return True
    return test


def go_float(v: float) -> str:
    """``strconv.FormatFloat(v, 'f', -1, 64)`` as Prometheus writes a sample value."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    text = format(Decimal(repr(v)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _time(text: str | None, what: str) -> int:
    """A Prometheus time parameter (decimal seconds or RFC 3339) in epoch ms."""
    if text is None or text == "":
        raise BadData(f'invalid parameter "{what}": missing')
    try:
        return round(float(text) * 1000)
    except ValueError:
        pass
    from datetime import datetime

    try:
        return round(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        raise BadData(f'invalid parameter "{what}": cannot parse "{text}" to a valid '
                      "timestamp") from None


def _seconds(ms: int) -> float | int:
    return ms // 1000 if ms % 1000 == 0 else ms / 1000


class Points:
    """One series' samples in time order: epoch ms and values, in two compact arrays (16 bytes a
    sample: a large sandbox keeps millions)."""

    __slots__ = ("times", "values")

    def __init__(self) -> None:
        self.times = array("q")
        self.values = array("d")

    def drop_before(self, horizon: int) -> int:
        """Leave out the samples before ``horizon``; how many went."""
        n = bisect_left(self.times, horizon)
        if n:
            del self.times[:n]
            del self.values[:n]
        return n


class Store:
    """The scraped series: labels (``__name__`` first, then the exposition's, ``instance`` and
    ``job``) → their samples. Bounded: :data:`RETENTION` of history and at most
    :data:`MAX_SAMPLES` samples (the oldest scrapes leave first)."""

    def __init__(self) -> None:
        self.series: dict[Labels, Points] = {}
        self.scrapes: list[int] = []  # each scrape's time (epoch ms), oldest first
        self.samples = 0
        self._counts: list[int] = []  # samples each kept scrape added
        self._keys: dict[tuple[str, str], Labels | None] = {}  # (instance, line head) → labels

    def _key(self, broker: str, head: str) -> Labels | None:
        """The labels of an exposition line's ``name{labels}`` (parsed once: the same line
        heads come back every scrape)."""
        k = (broker, head)
        if k not in self._keys:
            got = parse_exposition(head + " 0")
            self._keys[k] = ((("__name__", got[0][0]), *got[0][1], ("instance", broker),
                              ("job", JOB)) if got else None)
        return self._keys[k]

    def scrape(self, cluster: TestCluster, now: float | None = None) -> None:
        """One scrape of every broker's exposition at ``now`` (wall seconds), then the samples
        past the bounds dropped."""
        from lbctl.sandbox.metrics import exposition

        t_ms = int((time.time() if now is None else now) * 1000)
        with cluster._lock:  # a crashed broker is out of cluster.brokers: its target is down
            texts = [(b, exposition(cluster, b)) for b in list(cluster.brokers)]
        for broker, text in texts:
            for line in text.splitlines():
                if not line or line.startswith("#"):
                    continue
                head, _, raw = line.rpartition(" ")
                key = self._key(broker, head)
                try:
                    value = float(raw)
                except ValueError:
                    continue
                if key is None:
                    continue
                pts = self.series.get(key)
                if pts is None:
                    pts = self.series[key] = Points()
                pts.times.append(t_ms)
                pts.values.append(value)
                self.samples += 1
        self.scrapes.append(t_ms)
        self._counts.append(self.samples - sum(self._counts))
        horizon, kept = t_ms - int(RETENTION * 1000), self.samples
        while len(self.scrapes) > 1 and (self.scrapes[0] < horizon or kept > MAX_SAMPLES):
            kept -= self._counts.pop(0)
            self.scrapes.pop(0)
        horizon = self.scrapes[0]
        for key in list(self.series):
            pts = self.series[key]
            if pts.times[0] < horizon:
                self.samples -= pts.drop_before(horizon)
                if not pts.times:
                    del self.series[key]

    def matching(self, match: Matcher) -> list[Labels]:
        return [k for k in self.series if match(dict(k))]

    # ---- the HTTP API ------------------------------------------------------------------------
    def series_api(self, matches: Sequence[str], start: str | None, end: str | None
                   ) -> list[dict[str, str]]:
        """``GET /api/v1/series``: the label sets of the series any ``match[]`` selects with a
        sample in ``[start, end]`` (each once)."""
        if not matches:
            raise BadData("no match[] parameter provided")
        lo = _time(start, "start") if start else -(2 ** 62)
        hi = _time(end, "end") if end else 2 ** 62
        tests = [selector(m) for m in matches]
        out = []
        for key, pts in self.series.items():
            labels = dict(key)
            i = bisect_left(pts.times, lo)
            if any(t(labels) for t in tests) and i < len(pts.times) and pts.times[i] <= hi:
                out.append(labels)
        return out

    def query_range_api(self, query: str | None, start: str | None, end: str | None,
                        step: str | None) -> dict[str, Any]:
        """``GET /api/v1/query_range`` of a selector, bare or in ``last_over_time``."""
        if not query:
            raise BadData('invalid parameter "query": missing')
        s, e = _time(start, "start"), _time(end, "end")
        if step is None or step == "":
            raise BadData('invalid parameter "step": missing')
        try:
            step_ms = round(float(step) * 1000)
        except ValueError:
            raise BadData(f'invalid parameter "step": cannot parse "{step}" to a valid '
                          "duration") from None
        if e < s:
            raise BadData('invalid parameter "end": end timestamp must not be before start time')
        if step_ms <= 0:
            raise BadData('invalid parameter "step": zero or negative query resolution step '
                          "widths are not accepted. Try a positive integer")
        if (e - s) // step_ms + 1 > MAX_POINTS:
            raise BadData("exceeded maximum resolution of 11,000 points per timeseries. Try "
                          "decreasing the query resolution (?step=XX)")
        m = _QUERY.match(query)
        if m is not None:
            match, window = selector(m.group(1)), round(float(m.group(2)) * _UNIT_MS[m.group(3)])
        else:
            match, window = selector(query), LOOKBACK_MS
        grid = range(s, e + 1, step_ms)
        result = []
        for key in self.matching(match):
            pts, values = self.series[key], []
            times = pts.times
            i = bisect_right(times, s - 1)
            for t in grid:
                while i < len(times) and times[i] <= t:
                    i += 1
                if i and times[i - 1] > t - window:
                    values.append([_seconds(t), go_float(pts.values[i - 1])])
            if values:
                labels = dict(key)
                if m is not None:  # a function's result drops the metric name
                    labels.pop("__name__", None)
                result.append({"metric": labels, "values": values})
        return {"resultType": "matrix", "result": result}


def answer(store: Store, path: str, query: dict[str, list[str]]
           ) -> tuple[int, dict[str, Any]] | None:
    """The API's answer to ``path`` (status, JSON body), None for a path it does not serve."""
    if path not in ("/api/v1/series", "/api/v1/query_range"):
        return None
    one = {k: v[-1] for k, v in query.items() if v}
    try:
        if path == "/api/v1/series":
            data: Any = store.series_api(query.get("match[]", []), one.get("start"),
                                         one.get("end"))
        else:
            data = store.query_range_api(one.get("query"), one.get("start"), one.get("end"),
                                         one.get("step"))
    except BadData as err:
        return 400, {"status": "error", "errorType": "bad_data", "error": str(err)}
    return 200, {"status": "success", "data": data}
