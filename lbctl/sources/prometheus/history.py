"""One step's samples, and the snapshots built from them (:class:`PrometheusHistory`)."""

from __future__ import annotations

import math
import operator
import re
from array import array
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import compress, repeat
from typing import TYPE_CHECKING, Any

from lbctl.errors import UsageError
from lbctl.model.cluster import EXTENSIBLE, MODULAR, iso_time
from lbctl.model.wire.java import INT_MAX, LONG_MAX, MAX_EPOCH_MS
from lbctl.model.wire.snapshot import NamespaceBundleStats
from lbctl.sources.percent_usage import usage_for
from lbctl.sources.prometheus.catalog import (
    CATALOG,
    GAPS,
    MIB,
    RATES,
    RECONSTRUCTED,
    RENAMED_REASONS,
    RESOURCES,
    STAT_COUNTS,
    Metric,
    broker_id,
    discover,
    selector,
)
from lbctl.sources.prometheus.decisions import add_moves, increase, owners_of
from lbctl.sources.prometheus.request import HistoryRequest, Report

if TYPE_CHECKING:
    from lbctl.admin.prometheus import PrometheusClient, RangeQuery, RangeResult


#: samples per query a chunk of steps aims at (:meth:`PrometheusHistory._plan`)
STREAM_SAMPLES = 50_000
#: a bundle's ``NamespaceBundleStats`` fields in the order the snapshot writes them
BUNDLE_FIELDS = (*RATES, *STAT_COUNTS)
_FIELD_INDEX = {f: i for i, f in enumerate(BUNDLE_FIELDS)}
_COUNTS_FROM = len(RATES)
#: below this magnitude orjson and msgspec write a float alike (from 1e16 on, orjson writes
#: ``1e+16``, msgspec ``1e16``): a snapshot whose floats all are is written by msgspec
#: (:func:`lbctl.sources.prometheus.output.lines`), byte for byte what orjson wrote
PLAIN_FLOAT = 1e16
#: the fields :meth:`PrometheusHistory._local_broker_data` sums, in its order, as indexes of
#: :data:`BUNDLE_FIELDS` (throughputs, rates, topics, consumers, producers)
_SUMMED = (1, 3, 0, 2, 6, 4, 5)

#: ``LocalBrokerData.update``'s sums over a broker's bundles, in :data:`_SUMMED` order
Sums = tuple[float, float, float, float, int, int, int]
#: what a rebuilt report lists under ``reconstructed`` (one tuple, written as a JSON array)
_REBUILT = (*RESOURCES, "msgThroughputIn", "msgThroughputOut", "msgRateIn", "msgRateOut",
            "numTopics", "numBundles", "numConsumers", "numProducers", "bundles", "lastStats",
            "lastUpdate")
#: a snapshot, whether its typed stats are clean and whether it is plain
#: (:meth:`PrometheusHistory.built`)
Built = tuple[dict[str, Any], bool, bool]


#: a column: one value per step of a chunk (None: no sample at that step)
Column = list[Any]


@dataclass
class Grid:
    """A chunk's evaluation times: ``start``, ``start + step``, … ``n`` of them. Samples are
    kept by their index on it (columns), not by time: a step is read by position."""

    start: int
    step: int
    n: int

    @cached_property
    def times(self) -> list[int]:
        return list(range(self.start, self.start + self.n * self.step, self.step))

    def column(self, times: list[int], values: list[float]) -> Column:
        """A series' samples as a column: as they are when they fall on every step (as a range
        query answers), else placed one by one, a time off the grid left out and a time given
        twice keeping its last value."""
        start, step, n = self.start, self.step, self.n
        if times:  # one run of consecutive steps (a series that starts or ends in the chunk)
            first, off = divmod(times[0] - start, step)
            last = first + len(times)
            if not off and first >= 0 and last <= n and times == self.times[first:last]:
                if last - first == n:
                    return values
                return [None] * first + values + [None] * (n - last)
        col: Column = [None] * n
        for t, v in zip(times, values, strict=True):
            i, off = divmod(t - start, step)
            if not off and 0 <= i < n:
                col[i] = v
        return col


def _fill(col: Column, other: Column) -> None:
    """``other``'s values where ``col`` has none: a second series of the same broker and field
    (the first found wins, as it always has)."""
    for i, v in enumerate(other):
        if col[i] is None and v is not None:
            col[i] = v


@dataclass
class BundleColumns:
    """The per-bundle series of one chunk, by (broker, bundle): a column per field in
    :data:`BUNDLE_FIELDS` order. Columnar: a series' labels are read once per chunk, not once
    per sample, and a bundle's stats are made at a step only when its snapshot is built."""

    n: int = 0
    cols: dict[tuple[str, str], list[Column | None]] = field(default_factory=dict)
    #: bundle → the brokers with series of it in this chunk (first seen first)
    carriers: dict[str, list[str]] = field(default_factory=dict)
    #: in name order: each bundle's carriers, each with its presence (whether any field has a
    #: sample at each step) and its columns ready to read (rates with 0.0, counts as the
    #: integers :func:`_int` makes, 0 where no sample)
    entries: list[tuple[str, list[tuple[str, list[bool], list[Column]]]]] = field(
        default_factory=list)
    #: (broker, bundle) → its ``NamespaceBundleStats`` at each step (typed records made from the
    #: columns at C speed, never a dict per bundle and step) and whether every value of them is
    #: one the snapshot's declarations accept and msgspec writes as orjson does (``clean``:
    #: rates in [0, :data:`PLAIN_FLOAT`), counts within their Java type)
    leaves: dict[tuple[str, str], tuple[list[NamespaceBundleStats], bool]] = field(
        default_factory=dict)
    #: whether two brokers carry one bundle at a step (it moved between their scrapes): its
    #: owner is then settled at that step (:meth:`PrometheusHistory._owned`)
    conflict: list[bool] = field(default_factory=list)
    #: each broker's stats and sums at every step, made once per chunk, in broker order
    rows: dict[str, BrokerRows] = field(default_factory=dict)

    def add(self, b: str, name: str, f: str, col: Column) -> None:
        key = (b, name)
        cols = self.cols.get(key)
        if cols is None:
            cols = self.cols[key] = [None] * len(BUNDLE_FIELDS)
            self.carriers.setdefault(name, []).append(b)
        i = _FIELD_INDEX[f]
        have = cols[i]
        if have is None:
            cols[i] = col
        else:
            _fill(have, col)

    def seal(self) -> None:
        n = self.n
        every = [True] * n
        nothing: Column = [None] * n
        ready: dict[tuple[str, str], tuple[list[bool], list[Column]]] = {}
        for key, cols in self.cols.items():
            full = [c if c is not None else nothing for c in cols]
            if any(None not in c for c in full):
                present = every
            else:  # a sample of any field at the step (in C: no Python frame per sample)
                present = list(map(any, zip(*(map(operator.is_not, c, repeat(None))
                                              for c in full), strict=True)))
            out: list[Column] = [
                c if None not in c else [0.0 if v is None else v for v in c]
                for c in full[:_COUNTS_FROM]]
            # finite samples: _int without its checks (at C speed when every step has one ≥ 0)
            out += [list(map(round, c)) if None not in c and min(c) >= 0
                    else [0 if v is None or v < 0 else round(v) for v in c]
                    for c in full[_COUNTS_FROM:]]
            ready[key] = (present, out)
        _drop_split_parents(ready, self.carriers)
        self.entries = [(name, [(b, *ready[(b, name)]) for b in self.carriers[name]])
                        for name in sorted(self.carriers)]
        self.cols = {}
        self.leaves = {key: (list(map(NamespaceBundleStats, *out, repeat(0))), _clean(out))
                       for key, (_, out) in ready.items()}
        conflict = [False] * n
        carried: dict[str, list[tuple[str, list[bool], list[Column]]]] = {}
        for name, carriers in self.entries:  # in name order: each broker's too
            for b, present, columns in carriers:
                carried.setdefault(b, []).append((name, present, columns))
            if len(carriers) > 1:
                for i, k in enumerate(map(sum, zip(*(p for _, p, _ in carriers), strict=True))):
                    if k > 1:
                        conflict[i] = True
        self.conflict = conflict
        self.rows = {b: self._rows(b, carried[b]) for b in sorted(carried)}

    def _rows(self, b: str, carried: list[tuple[str, list[bool], list[Column]]]) -> BrokerRows:
        """A broker's stats and sums at every step of the chunk, as if it alone carried each of
        its bundles (true at every step but a :attr:`conflict`), run by run of steps over which
        it carries the same bundles: the stats by zipping the runs' typed records, the sums
        column by column, bundle after bundle in name order (each step's additions in the order
        ``LocalBrokerData.update`` makes them)."""
        n = self.n
        cuts = {0, n}
        for _, present, _ in carried:
            if not all(present):  # gained or lost in the chunk: where it changes
                cuts.update(compress(range(1, n), map(operator.ne, present, present[1:])))
        stats: list[dict[str, NamespaceBundleStats]] = []
        sums: list[Sums] = []
        # a rate sum msgspec would write otherwise than orjson, or a count sum beyond a Java int
        big = False
        bounds = sorted(cuts)
        for lo, hi in zip(bounds, bounds[1:], strict=False):
            here = [(name, cols) for name, present, cols in carried if present[lo]]
            if not here:
                stats += [{}] * (hi - lo)
                sums += [(0.0, 0.0, 0.0, 0.0, 0, 0, 0)] * (hi - lo)
                continue
            names = [name for name, _ in here]
            # a dict per step, made in C: the names zipped with each step's row of records
            stats += map(dict, map(zip, repeat(names), zip(
                *(self.leaves[(b, name)][0][lo:hi] for name in names), strict=True)))
            acc: list[Column] = []
            for f in _SUMMED:
                total: Column = [0.0 if f < _COUNTS_FROM else 0] * (hi - lo)
                for _, cols in here:
                    total = list(map(operator.add, total, cols[f][lo:hi]))
                acc.append(total)
            sums += zip(*acc, strict=True)
            big = big or (max(map(max, acc[:_COUNTS_FROM])) >= PLAIN_FLOAT
                          or max(map(max, acc[_COUNTS_FROM:])) > INT_MAX)
        # clean: every typed stats of it, sums that msgspec writes as orjson does and counts
        # that a LocalBrokerData holds
        clean = not big and all(self.leaves[(b, name)][1] for name, _, _ in carried)
        return BrokerRows(stats, sums, clean)

    def at(self, i: int) -> dict[str, list[str]]:
        """Bundle → the brokers whose samples carry it at step ``i`` (unreconciled), in name
        order."""
        out: dict[str, list[str]] = {}
        for name, carriers in self.entries:
            bs = [b for b, present, _ in carriers if present[i]]
            if bs:
                out[name] = bs
        return out


def _drop_split_parents(ready: dict[tuple[str, str], tuple[list[bool], list[Column]]],
                        carriers: Mapping[str, list[str]]) -> None:
    """A bundle is absent at every step where a bundle inside its range is present.

    lbctl reads ``last_over_time(…[window])``, which returns a series' last sample within the
    window even after the series stopped (a range selector never sees a staleness marker): for
    a window after a split, the parent's last samples and its children's first ones are both
    there, and a step carried both, overlapping ranges the snapshot refuses ("expected bundles
    of one namespace not to overlap"). Pulsar never merges bundles, so of two nested ranges
    present at one step the outer one is the bundle that was split: its samples there are
    stale. One pass over the chunk's names (not per step); nothing changes when no two ranges
    of a namespace nest (the usual chunk)."""
    by_ns: dict[str, list[tuple[int, int, str]]] = {}
    for name in carriers:
        ns, _, tail = name.rpartition("/")
        lower, _, upper = tail.partition("_")
        try:
            by_ns.setdefault(ns, []).append((int(lower, 16), -int(upper, 16), name))
        except ValueError:
            continue  # not a bundle name: the snapshot's check names it
    for ranges in by_ns.values():
        if len(ranges) < 2:
            continue
        ranges.sort()  # by lower bound, the widest first: an outer range before its inner ones
        open_: list[tuple[int, str]] = []  # the ranges enclosing the current one (upper, name)
        for lo, neg_hi, name in ranges:
            while open_ and open_[-1][0] <= lo:
                open_.pop()
            if open_:
                inner = [any(col) for col in zip(*(ready[(b, name)][0] for b in carriers[name]),
                                                 strict=True)]
                for _, outer in open_:
                    for b in carriers[outer]:
                        present, out = ready[(b, outer)]
                        ready[(b, outer)] = ([p and not q for p, q in zip(present, inner,
                                                                          strict=True)], out)
            open_.append((-neg_hi, name))


def _clean(cols: list[Column]) -> bool:
    """Whether a carrier's columns (rates, then counts) hold only values the snapshot accepts
    (a rate finite and ≥ 0, a count within its Java type) and floats below
    :data:`PLAIN_FLOAT`: its typed stats then need no other check."""
    rates, counts = cols[:_COUNTS_FROM], cols[_COUNTS_FROM:]
    return (all(min(c) >= 0.0 and max(c) < PLAIN_FLOAT for c in rates)
            and all(max(c) <= INT_MAX for c in counts[:-1]) and max(counts[-1]) <= LONG_MAX)


@dataclass
class BrokerRows:
    """A broker's bundles in one chunk, as if it alone carried each of them: its ``lastStats``
    at each step and their sums (:data:`Sums`), and whether they are clean (:func:`_clean`,
    rate sums below :data:`PLAIN_FLOAT` and count sums within a Java ``int``, as
    ``LocalBrokerData``'s ``numTopics``, ``numConsumers`` and ``numProducers`` are)."""

    stats: list[dict[str, NamespaceBundleStats]]
    sums: list[Sums]
    clean: bool


@dataclass
class Step:
    """Every sample found at one evaluation time (``t``, step ``i`` of its chunk), by broker."""

    t: int
    i: int = 0
    resources: dict[str, dict[str, float]] = field(default_factory=dict)
    features: dict[str, dict[str, float]] = field(default_factory=dict)
    #: the chunk's per-bundle columns, read at step ``i``
    bundles: BundleColumns = field(default_factory=BundleColumns)
    #: topic → broker → stats (a topic moving between two scrapes shows under both)
    topics: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    counters: dict[str, dict[tuple[tuple[str, str], ...], float]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    #: the chunk's usages (from the resources and the limits), made a column at a time
    usages: UsageColumns = field(default_factory=lambda: UsageColumns({}, {}))

    @property
    def empty(self) -> bool:
        return not self.resources


@dataclass
class _Chunk:
    """One chunk's samples, column by column; :meth:`step` is one evaluation time's view."""

    grid: Grid
    #: group (resources, features, limits) → broker → field → column
    brokers: dict[str, dict[str, dict[str, Column]]]
    bundles: BundleColumns
    #: step index → topic → broker → stats
    topics: dict[int, dict[str, dict[str, dict[str, float]]]]
    #: step index → counter → labels → value
    counters: dict[int, dict[str, dict[tuple[tuple[str, str], ...], float]]]
    warnings: list[str]
    usages: UsageColumns = field(init=False)

    def __post_init__(self) -> None:
        self.usages = UsageColumns(self.brokers["resources"], self.brokers["limits"])

    def step(self, i: int) -> Step:
        def rows(group: str) -> dict[str, dict[str, float]]:
            out: dict[str, dict[str, float]] = {}
            for b, fields in self.brokers[group].items():
                row = {f: v for f, col in fields.items() if (v := col[i]) is not None}
                if row:
                    out[b] = row
            return out

        return Step(self.grid.start + i * self.grid.step, i, rows("resources"),
                    rows("features"), self.bundles, self.topics.get(i, {}),
                    self.counters.get(i, {}), list(self.warnings), self.usages)


@dataclass
class UsageColumns:
    """Each broker's five usages (:func:`usage_for`) at every step of a chunk, made a column at a
    time (:func:`usage_columns`) when the broker's first report of the chunk is built."""

    #: broker → field → column, as :class:`_Chunk` holds them
    resources: dict[str, dict[str, Column]]
    limits: dict[str, dict[str, Column]]
    made: dict[str, list[list[dict[str, float]]]] = field(default_factory=dict)
    #: broker → whether its usages and limits are below :data:`PLAIN_FLOAT` at every step
    plain: dict[str, bool] = field(default_factory=dict)

    def of(self, b: str) -> list[list[dict[str, float]]]:
        """Broker ``b``'s usage columns, in :data:`RESOURCES` order."""
        cols = self.made.get(b)
        if cols is None:
            plain = True
            cols = []
            for r in RESOURCES:
                percents, limits = self._inputs(b, r)
                # a usage is the percentage's share of the limit (or of 100), within a few ulps
                top = max(max(limits), 100.0)
                plain = plain and top < PLAIN_FLOAT and max(map(abs, percents)) * top < PLAIN_FLOAT
                cols.append(usage_columns(percents, limits))
            self.made[b], self.plain[b] = cols, plain
        return cols

    def _inputs(self, b: str, r: str) -> tuple[list[float], list[float]]:
        """The percentages (0 where none) and the limits (``_limit``'s) of a usage column."""
        col = self.resources[b].get(r)
        n = len(next(iter(self.resources[b].values())))
        percents = ([0.0] * n if col is None else col if None not in col
                    else [0.0 if v is None else v for v in col])
        raw = self.limits.get(b, {}).get(r)
        if raw is None:
            return percents, [100.0] * n
        # a limit is nearly constant along a chunk: _limit once per distinct value (equal
        # values give equal limits, -0.0 and 0.0 alike: both are no limit)
        limit_of = {v: _limit(r, v) for v in set(raw)}
        limits = list(map(limit_of.__getitem__, raw))
        return percents, limits


class PrometheusHistory:
    """Builds the snapshots of a :class:`HistoryRequest`, step by step, chunk by chunk."""

    def __init__(self, client: PrometheusClient, req: HistoryRequest,
                 progress: Callable[[str, int, int], None] | None = None):
        self.client = client
        self.req = req
        self.progress = progress
        self.layout = discover(client, req)
        ref = req.reference
        if ref is not None and ref.cluster and ref.cluster != self.layout.cluster:
            raise UsageError(f"--reference {ref.origin}: a snapshot of cluster {ref.cluster!r}, "
                             f"but Prometheus is read for cluster {self.layout.cluster!r}: its "
                             "bundle boundaries and settings are another cluster's")
        self.report = Report()
        for m in CATALOG["resources"]:
            if f"resources.{m.field}" not in self.layout.names:
                self.report.warnings.append(
                    f"{m.names[0]} is not exported by cluster {self.layout.cluster}: "
                    f"{m.field} taken as 0 % in every snapshot")
        self._instance_broker: dict[str, str] = {}
        self._bounds = dict(req.reference.namespaces) if req.reference else {}
        #: the figures every snapshot repeats are plain (:meth:`built`)
        self._plain = _plain_value(req.step_ms / 1000) and (
            req.reference is None or _plain_value(list(req.reference.config.values())))

    # ---- reading -------------------------------------------------------------------------------
    def _window(self) -> str:
        """``(t − step, t]``: one step minus a millisecond, so no sample serves two steps."""
        return f"{max(1, self.req.step_ms - 1)}ms"

    def _queries(self, s: int, e: int) -> list[tuple[str, Metric, RangeQuery]]:
        """Every query of the chunk ``[s, e]``: each metric name found, by group, in the order
        the samples are read."""
        from lbctl.admin.prometheus import RangeQuery

        groups = ["resources", "features", "limits",
                  "bundles" if self.layout.bundles_from == "bundles" else "topics",
                  "counters", "breakdowns"]
        out = []
        for group in groups:
            for m in CATALOG[group]:
                for name in self.layout.names.get(f"{group}.{m.field}", []):
                    q = (f"last_over_time({selector(name, self.layout.cluster, m.matchers)}"
                         f"[{self._window()}])")
                    n = self.layout.series.get(f"{name}{{{m.matchers}}}", 1)
                    out.append((group, m, RangeQuery(q, s, e, self.req.step_ms, n)))
        return out

    def _fetch(self, s: int, e: int, asked: Callable[[], None] | None = None) -> _Chunk:
        """The chunk ``[s, e]``: its queries asked together, their series as columns;
        ``asked`` is called once they are answered.

        Each answer is made into columns as soon as it and every answer before it are in
        (``query_ranges``' ``done``), while Prometheus still evaluates the later queries: on a
        chunk asked here (the first; a later one when it was not read ahead) the columns were
        otherwise made after the last answer, on the critical path (about 0.1 s of the first
        chunk's 0.33 s at 3 h × 100 brokers × 500 bundles). The answers are taken in the
        queries' order, as before, so every column, name and broker is the same. The bundles'
        columns are sealed once their last query is taken (the counters' queries come after
        it): the CPU left after the last answer of the first chunk went from ~64 to ~5 ms."""
        from lbctl.model.bundle import BundleName, BundleNameError

        step = self.req.step_ms
        grid = Grid(s, step, (e - s) // step + 1)
        queries = self._queries(s, e)
        brokers: dict[str, dict[str, dict[str, Column]]] = {
            "resources": {}, "features": {}, "limits": {}}
        bundles = BundleColumns(grid.n)
        topics: dict[int, dict[str, dict[str, dict[str, float]]]] = {}
        counters: dict[int, dict[str, dict[tuple[tuple[str, str], ...], float]]] = {}
        bad: set[str] = set()
        names: dict[str, str | None] = {}  # bundle label → its name, once per chunk
        # the bundles are sealed once their last query is taken (nothing after it adds to them)
        last_bundles = max((k for k, (group, _, _) in enumerate(queries) if group == "bundles"),
                           default=None)

        def take(k: int, res: RangeResult) -> None:
            group, m, _ = queries[k]
            for ser in res.series:
                labels = ser.labels
                if group == "resources":
                    b = broker_id(labels)
                    if "instance" in labels:
                        self._instance_broker[labels["instance"]] = b
                    _merge(brokers[group].setdefault(b, {}), m.field,
                           grid.column(ser.times, ser.values))
                elif group in ("features", "limits"):
                    if "stat" in labels:
                        continue
                    _merge(brokers[group].setdefault(self._broker_of(labels), {}), m.field,
                           grid.column(ser.times, ser.values))
                elif group == "bundles":
                    raw = labels.get("bundle", "")
                    if raw not in names:
                        try:
                            names[raw] = str(BundleName.parse(raw))
                        except BundleNameError:
                            names[raw] = None
                    name = names[raw]
                    if name is None:
                        bad.add(raw)
                        continue
                    bundles.add(self._broker_of(labels), name, m.field,
                                grid.column(ser.times, ser.values))
                elif group == "topics":
                    topic = labels.get("topic", "")
                    if labels.get("partition"):
                        topic = f"{topic}-partition-{labels['partition']}"
                    b = self._broker_of(labels)
                    for i, v in enumerate(grid.column(ser.times, ser.values)):
                        if v is not None:
                            topics.setdefault(i, {}).setdefault(topic, {}).setdefault(
                                b, {}).setdefault(m.field, v)
                else:  # counters, breakdowns
                    key = tuple(sorted(labels.items()))
                    for i, v in enumerate(grid.column(ser.times, ser.values)):
                        if v is not None:
                            counters.setdefault(i, {}).setdefault(m.field, {})[key] = v
            if k == last_bundles:
                bundles.seal()

        results = self.client.query_ranges([q for _, _, q in queries], take)
        if asked is not None:
            asked()
        warnings: list[str] = []
        for res in results:
            for w in res.warnings:
                self.report.warnings.append(f"Prometheus warned (partial data, {iso_time(s)} to "
                                            f"{iso_time(e)}): {w}")
                warnings.append(f"Prometheus warned: {w}")
        if last_bundles is None:
            bundles.seal()
        for bn in sorted(bad)[:3]:
            self.report.warnings.append(f"bundle label {bn!r} is not a bundle name; left out")
        return _Chunk(grid, brokers, bundles, topics, counters, list(dict.fromkeys(warnings)))

    def _broker_of(self, labels: Mapping[str, str]) -> str:
        if labels.get("broker"):
            return broker_id(labels)
        inst = labels.get("instance", "")
        return self._instance_broker.get(inst) or inst or "unknown"

    # ---- building ------------------------------------------------------------------------------
    def snapshots(self) -> Iterator[dict[str, Any]]:
        """Snapshot v1 objects, in time order (streamed: one chunk of steps in memory at once);
        their ``lastStats`` values are typed records where per-bundle metrics gave them."""
        built = self.built()
        try:
            for snap, _, _ in built:
                yield snap
        finally:
            built.close()

    def built(self) -> Generator[Built, None, None]:
        """Each snapshot (:meth:`snapshots`) with whether its typed stats are clean (every
        value checked, column by column, as the snapshot's declarations would check it: else
        the snapshot is to be read the checked way, through its JSON; the brokers' sums too:
        rates finite and ≥ 0, counts within a Java ``int``) and plain (every float below
        :data:`PLAIN_FLOAT` and no section but the modular ones: msgspec then writes it byte
        for byte as orjson does; every usage and limit finite, and its time one the reader
        takes as ``lastUpdate``). A clean, plain snapshot's brokers thus pass every check of
        their figures the reader makes (``DirectStates`` is told so, and does not look at
        them again)."""
        req = self.req
        chunks = self._plan()
        total = (req.end_ms - req.start_ms) // req.step_ms + 1
        self.report.steps = total
        pending: Step | None = None  # the step whose snapshot waits for the next step
        ready: Built | None = None  # built; its moves wait for the next snapshot
        skipped: list[int] = []
        known: set[str] = set()
        done = 0

        # each snapshot's owners, computed once: the next owners of the snapshot before it, then
        # its own when its moves are found
        ready_owners: dict[str, str] | None = None

        def emit(built: Built, next_owners: Mapping[str, str]) -> Built:
            nonlocal done
            add_moves(built[0], next_owners, ready_owners)
            done += 1
            if self.progress:
                self.progress("prometheus", done, total)
            return built

        for chunk in self._chunks(chunks):
            for i in range(chunk.grid.n):
                st = chunk.step(i)
                t = st.t
                beyond = t > req.end_ms
                if st.empty:
                    if not beyond:
                        skipped.append(t)
                        self.report.empty_steps += 1
                    continue
                if pending is not None:
                    built = self._snapshot(pending, st, known)
                    owners = owners_of(built[0]["brokers"])
                    if ready is not None:
                        yield emit(ready, owners)
                    ready, ready_owners = built, owners
                if beyond:  # only read for the last snapshot's observed decisions
                    if ready is not None:
                        extra = self._bundle_stats(st, None)
                        yield emit(ready, {n: b for b, per in extra.items() for n in per
                                           if b in st.resources})
                    pending = ready = None
                    break
                st.warnings += _skipped_note(skipped)
                skipped = []
                pending = st
        if pending is not None:
            built = self._snapshot(pending, None, known)
            owners = owners_of(built[0]["brokers"])
            if ready is not None:
                yield emit(ready, owners)
            ready, ready_owners = built, owners
        if ready is not None:
            yield emit(ready, {})
        if self.progress:
            self.progress("prometheus", total, total)
        self.report.snapshots = done

    def _plan(self) -> list[tuple[int, int]]:
        """The chunks of steps: of about :data:`STREAM_SAMPLES` samples per query (a few chunks
        in memory at once, the next one asked while this one is built), or as large as the
        client allows when that would take more than half its requests. Every chunk asks once
        per metric name found: refused before the first request if too many."""
        from lbctl.admin.prometheus import chunk_count, plan_chunks

        req, c = self.req, self.client
        span = (req.start_ms, req.read_end_ms, req.step_ms, self.layout.max_series)
        queries = max(1, sum(len(names) for names in self.layout.names.values()))
        budget = min(c.max_samples, STREAM_SAMPLES)
        if queries * chunk_count(*span, max_points=c.max_points,
                                 max_samples=budget) > c.max_requests // 2:
            budget = c.max_samples
        c.check_requests(queries * chunk_count(*span, max_points=c.max_points,
                                               max_samples=budget))
        return plan_chunks(*span, max_points=c.max_points, max_samples=budget)

    def _chunks(self, plan: list[tuple[int, int]]) -> Iterator[_Chunk]:
        """Each chunk of ``plan``, in order. While one is built into snapshots, the next one's
        answers are read ahead by a worker thread (:meth:`PrometheusClient.read_ahead`, on a
        client of its own): Prometheus evaluates the next queries on its own cores meanwhile.
        Only the waiting is done there; the answers are decoded here, when their chunk is read
        (a worker that decoded too would only take turns with this thread on the interpreter,
        and the turns cost: 17 % more CPU measured at 24 h × 100 brokers × 500 bundles). The
        next chunk is asked once this one is answered (read ahead, or asked here), never while
        this thread waits for it: Prometheus then evaluates the chunk waited for on its cores
        alone (at 3 h × 100 brokers × 500 bundles, two chunks, Prometheus' CPU during the first
        wait went from 0.32 to 0.16 s; prom10's change). The client itself is used by this
        thread alone. Stopped early (an error, an interrupt), the worker's requests are
        cancelled and the worker waited for."""
        client = self.client
        if len(plan) == 1 or not client.can_read_ahead():
            for s, e in plan:
                yield self._fetch(s, e)
            return
        from concurrent.futures import Future, ThreadPoolExecutor

        reader = client.reader()

        def ahead(s: int, e: int) -> dict[str, tuple[int, Any, bytes]]:
            try:
                return reader.read_ahead(
                    client.range_urls([q for _, _, q in self._queries(s, e)]))
            except Exception:  # asked again by this thread, where its error is raised
                return {}

        pool = ThreadPoolExecutor(1, thread_name_prefix="lbctl-prometheus")
        nxt: Future[dict[str, tuple[int, Any, bytes]]] | None = None
        try:
            for k, (s, e) in enumerate(plan):
                answers = nxt.result() if nxt is not None else {}
                nxt = None

                def read_next(k: int = k) -> None:
                    nonlocal nxt
                    if k + 1 < len(plan):
                        nxt = pool.submit(ahead, *plan[k + 1])

                client.serve(answers)
                if answers:
                    read_next()
                yield self._fetch(s, e, None if answers else read_next)
        finally:
            client.serve({})
            if nxt is not None and not nxt.done():
                reader.interrupt()
            pool.shutdown(wait=True)
            reader.close()

    def _snapshot(self, st: Step, nxt: Step | None, known: set[str]) -> Built:
        layout = self.layout
        at = st.t
        gaps = list(st.warnings)
        brokers_stats, sums, clean = self._owned(
            st, gaps, (lambda: self._raw_owners(nxt)) if nxt else None)
        exported = [r for r in RESOURCES if f"resources.{r}" in layout.names]
        every = set(exported)
        present = []
        missing: dict[str, str] = {}
        for b in sorted(st.resources):
            if st.resources[b].keys() >= every:  # the usual case, at C speed
                present.append(b)
            else:  # a partial scrape: the report would be half made up
                lacking = [r for r in exported if r not in st.resources[b]]
                missing[b] = f"no sample of {', '.join(lacking)} in the step"
        for b in sorted(known - set(st.resources)):
            missing[b] = "no pulsar_lb_* sample in the step (down, or not scraped)"
        for b in sorted(set(brokers_stats) - set(st.resources)):
            missing.setdefault(b, "bundle samples without pulsar_lb_* samples")
        for b, why in sorted(missing.items()):
            gaps.append(f"broker {b}: {why} before {iso_time(at)}; left out")
            self.report.broker_gaps[b] = self.report.broker_gaps.get(b, 0) + 1
        known.update(st.resources)
        brokers: dict[str, Any] = {}
        for b in present:
            stats = brokers_stats.get(b, {})
            made = sums.get(b)
            if made is None:  # a step where two brokers carry one bundle, or per-topic metrics
                made = _sums(stats)
                clean = (clean and max(made[:_COUNTS_FROM]) < PLAIN_FLOAT
                         and max(made[_COUNTS_FROM:]) <= INT_MAX)
            brokers[b] = self._local_broker_data(b, st, stats, made)
        snap: dict[str, Any] = {
            "format": "lbctl/snapshot@1", "cluster": layout.cluster, "capturedAt": iso_time(at),
            "loadManager": layout.load_manager,
            "config": dict(self.req.reference.config) if self.req.reference else {},
            "brokers": brokers,
        }
        namespaces = self._namespaces(brokers_stats, gaps)
        if namespaces:
            snap["namespaces"] = namespaces
        if layout.bundles_from == "topics" and st.topics:
            snap["topics"] = {name: {**{k: float(stats.get(k, 0.0)) for k in RATES},
                                     "producerCount": _int(stats.get("producerCount")),
                                     "consumerCount": _int(stats.get("consumerCount"))}
                              for name, per in sorted(st.topics.items()) if _topic_ok(name)
                              for stats in [per[max(per)]]}
        if layout.load_manager == EXTENSIBLE:
            self._extensible(snap, st)
        rebuilt = ["brokers"]
        if nxt is not None:
            snap["observed"] = self._observed(st, nxt)
            rebuilt.append("observed")
        if layout.load_manager == EXTENSIBLE:
            rebuilt += ["brokerLoadData", "topBundlesLoadData"]
        if "topics" in snap:
            rebuilt.append("topics")
        snap[RECONSTRUCTED] = rebuilt
        snap["rebuiltFrom"] = {
            "prometheus": _safe(self.client.url), "stepSeconds": self.req.step_ms / 1000,
            "bundles": "pulsar_bundle_* (per-bundle metrics)" if layout.bundles_from == "bundles"
            else "pulsar_* per-topic metrics summed per bundle"}
        if gaps:
            snap[GAPS] = gaps
        usages_plain = st.usages.plain
        plain = (clean and self._plain and 0 < at <= MAX_EPOCH_MS
                 and layout.load_manager == MODULAR
                 and layout.bundles_from == "bundles" and "topics" not in snap
                 and all(usages_plain[b] for b in present))
        return snap, clean, plain

    def _raw_owners(self, st: Step) -> dict[str, set[str]]:
        """Bundle (or topic) → the brokers whose samples carry it at ``st``, unreconciled."""
        if self.layout.bundles_from == "bundles":
            return {name: set(bs) for name, bs in st.bundles.at(st.i).items()}
        return {topic: set(per_broker) for topic, per_broker in st.topics.items()}

    def _pick(self, what: str, brokers: set[str], st: Step,
              hint: Callable[[], dict[str, set[str]]] | None, gaps: list[str] | None) -> str:
        """One owner for a bundle (or topic) two brokers' samples carry in the same step — it
        moved between their scrapes: the one that still carries it at the next step (``hint``:
        the raw owners there, read only when needed), else the one with load-balancing
        samples, else the last by name; said under ``gaps``."""
        after = hint() if hint is not None else {}
        ranked = sorted(brokers, key=lambda b: (b in after.get(what, ()), b in st.resources, b))
        chosen = ranked[-1]
        if gaps is not None:
            gaps.append(f"{what} carried by {', '.join(sorted(brokers))} in the same step (moving);"
                        f" kept with {chosen}")
        return chosen

    def _bundle_stats(self, st: Step, gaps: list[str] | None,
                      hint: Callable[[], dict[str, set[str]]] | None = None
                      ) -> dict[str, dict[str, Any]]:
        """Broker → bundle → its ``NamespaceBundleStats``, one owner per bundle (``hint``: the
        raw owners at the next step, to settle a bundle two brokers carry)."""
        return self._owned(st, gaps, hint)[0]

    def _owned(self, st: Step, gaps: list[str] | None,
               hint: Callable[[], dict[str, set[str]]] | None = None
               ) -> tuple[dict[str, dict[str, Any]], dict[str, Sums], bool]:
        """:meth:`_bundle_stats`, with the sums of the brokers whose bundles no other broker
        carried in the chunk (made once per chunk), and whether every typed stats is clean
        (:func:`_clean`). Per-bundle metrics give typed records (``NamespaceBundleStats``),
        per-topic ones dicts (checked when the snapshot is decoded)."""
        if self.layout.bundles_from == "bundles":
            i = st.i
            cols = st.bundles
            if not cols.conflict[i]:  # each bundle has one carrier: the chunk's rows
                out: dict[str, dict[str, Any]] = {}
                sums: dict[str, Sums] = {}
                clean = True
                for b, rows in cols.rows.items():  # in broker order
                    stats = rows.stats[i]
                    if stats:
                        out[b] = stats
                        sums[b] = rows.sums[i]
                        clean = clean and rows.clean
                return out, sums, clean
            leaves = cols.leaves
            clean = True
            owned: dict[str, dict[str, Any]] = {}
            for name, carriers in cols.entries:  # in name order: each broker's sorted
                here = [c for c in carriers if c[1][i]]
                if not here:
                    continue
                b = here[0][0] if len(here) == 1 else self._pick(
                    name, {c[0] for c in here}, st, hint, gaps)
                lv, ok = leaves[(b, name)]
                clean = clean and ok
                per = owned.get(b)
                if per is None:
                    per = owned[b] = {}
                per[name] = lv[i]
            return {b: owned[b] for b in sorted(owned)}, {}, clean
        from lbctl.model.bundle import locate, topic_hash

        unknown: set[str] = set()
        by_owner: dict[str, dict[str, Any]] = {}
        bundle_owner: dict[str, str] = {}
        per_bundle: dict[str, list[tuple[str, dict[str, float]]]] = {}
        for topic in sorted(st.topics):
            ns = _topic_ns(topic)
            bounds = self._bounds.get(ns) if ns else None
            if bounds is None:
                unknown.add(ns or topic)
                continue
            per_broker = st.topics[topic]
            b = next(iter(per_broker)) if len(per_broker) == 1 else self._pick(
                topic, set(per_broker), st, hint, gaps)
            name = f"{ns}/{locate(bounds, topic_hash(topic))}"
            per_bundle.setdefault(name, []).append((b, per_broker[b]))
        for name, items in per_bundle.items():
            brokers = {b for b, _ in items}
            # every topic of a bundle is served by its owner; topics on two brokers: it moved
            bundle_owner[name] = next(iter(brokers)) if len(brokers) == 1 else self._pick(
                name, brokers, st, None, gaps)
        for name in sorted(per_bundle):
            acc = by_owner.setdefault(bundle_owner[name], {}).setdefault(name, {
                **dict.fromkeys(RATES, 0.0), "consumerCount": 0, "producerCount": 0,
                "topics": 0, "cacheSize": 0})
            for _, v in per_bundle[name]:
                for k in RATES:
                    acc[k] += float(v.get(k, 0.0))
                acc["consumerCount"] += _int(v.get("consumerCount"))
                acc["producerCount"] += _int(v.get("producerCount"))
                acc["topics"] += 1
        if unknown and gaps is not None:
            shown = ", ".join(sorted(unknown)[:3])
            gaps.append(f"topics of {len(unknown)} namespace(s) without boundaries in the "
                        f"reference ({shown}{', …' if len(unknown) > 3 else ''}); left out")
        return {b: by_owner[b] for b in sorted(by_owner)}, {}, True

    def _local_broker_data(self, b: str, st: Step, stats: dict[str, Any], sums: Sums
                           ) -> dict[str, Any]:
        """``LocalBrokerData`` JSON: the usages, the sums over the bundles and the stats
        themselves."""
        i = st.i
        cpu, memory, direct, bw_in, bw_out = st.usages.of(b)
        tp_in, tp_out, r_in, r_out, topics, consumers, producers = sums
        return {"cpu": cpu[i], "memory": memory[i], "directMemory": direct[i],
                "bandwidthIn": bw_in[i], "bandwidthOut": bw_out[i],
                "msgThroughputIn": tp_in, "msgThroughputOut": tp_out, "msgRateIn": r_in,
                "msgRateOut": r_out, "numTopics": topics, "numBundles": len(stats),
                "numConsumers": consumers, "numProducers": producers, "bundles": list(stats),
                "lastStats": stats, "lastUpdate": st.t, RECONSTRUCTED: _REBUILT}

    def _namespaces(self, stats: Mapping[str, Mapping[str, Any]], gaps: list[str]
                    ) -> dict[str, Any]:
        """The reference's boundaries of each namespace whose bundles this step agrees with
        (a split since then makes them disagree: those are left out, and said so)."""
        from lbctl.model.bundle import format_position

        if not self._bounds:
            return {}
        owned: dict[str, set[str]] = {}
        for per in stats.values():
            for name in per:
                ns, _, rng = name.rpartition("/")
                owned.setdefault(ns, set()).add(rng)
        out: dict[str, Any] = {}
        for ns, bounds in sorted(self._bounds.items()):
            text = [format_position(x) for x in bounds]
            ranges = {f"{a}_{b}" for a, b in zip(text, text[1:], strict=False)}
            if owned.get(ns, set()) <= ranges:
                out[ns] = {"boundaries": text, "numBundles": len(text) - 1}
            else:
                gaps.append(f"namespace {ns}: its bundles differ from the reference's boundaries "
                            "(split since?); boundaries left out")
        return out

    def _extensible(self, snap: dict[str, Any], st: Step) -> None:
        from msgspec import structs

        from lbctl.config import resolve
        from lbctl.sources.live_extensible import (
            LbMetrics,
            broker_load_data,
            top_bundles_load_data,
        )

        settings = resolve(snap["config"])
        load: dict[str, Any] = {}
        tops: dict[str, Any] = {}
        for b, rep in snap["brokers"].items():
            m = LbMetrics(dict(st.resources[b]), dict(st.features.get(b, {})))
            stats = {n: v if type(v) is dict else structs.asdict(v)
                     for n, v in rep["lastStats"].items()}
            load[b] = broker_load_data(m, stats, settings, st.t)
            tops[b] = top_bundles_load_data(stats, settings)
            rep["loadManagerClassName"] = ("org.apache.pulsar.broker.loadbalance.extensions."
                                           "ExtensibleLoadManagerImpl")
        snap["brokerLoadData"] = load
        snap["topBundlesLoadData"] = tops

    # ---- observed decisions ------------------------------------------------------------------------
    def _observed(self, st: Step, nxt: Step) -> dict[str, Any]:
        out: dict[str, Any] = {"until": iso_time(nxt.t)}
        notes: list[str] = []
        leaders: set[str] = set()
        for m in CATALOG["counters"]:
            if f"counters.{m.field}" not in self.layout.names:
                continue
            before, after = st.counters.get(m.field, {}), nxt.counters.get(m.field, {})
            if not before and not after:
                continue  # not exported in this interval (no leader yet, or not scraped)
            total, who = increase(before, after, notes, m.field)
            out[m.field] = int(total)
            leaders |= who
        for m in CATALOG["breakdowns"]:
            if f"breakdowns.{m.field}" not in self.layout.names:
                continue
            before, after = st.counters.get(m.field, {}), nxt.counters.get(m.field, {})
            per: dict[str, int] = {}
            for key in sorted(set(before) | set(after)):
                labels = dict(key)
                label = f"{labels.get('result', '?')}/{labels.get('reason', '?')}"
                label = RENAMED_REASONS.get((m.field, label), label)
                inc, who = increase({key: before[key]} if key in before else {},
                                     {key: after[key]} if key in after else {}, notes, m.field)
                if inc:
                    per[label] = per.get(label, 0) + int(inc)
                    leaders |= who
            out[m.field] = per
        if leaders:
            notes.append("decisions counted on " + ", ".join(sorted(leaders)))
        if notes:
            out["notes"] = list(dict.fromkeys(notes))
        return out


def _plain_value(value: object) -> bool:
    """No float at or above :data:`PLAIN_FLOAT` (or not finite) in a setting's value."""
    if type(value) is float:
        return abs(value) < PLAIN_FLOAT
    if isinstance(value, list | tuple):
        return all(map(_plain_value, value))
    return True


def _sums(stats: Mapping[str, Any]) -> Sums:
    """The sums over the stats in their order, one addition at a time
    (``LocalBrokerData.update``), of typed stats or of dicts (per-topic metrics)."""
    tp_in = tp_out = r_in = r_out = 0.0
    topics = consumers = producers = 0
    for s in stats.values():
        if type(s) is dict:
            s = NamespaceBundleStats(**s)
        tp_in += s.msgThroughputIn
        tp_out += s.msgThroughputOut
        r_in += s.msgRateIn
        r_out += s.msgRateOut
        topics += s.topics
        consumers += s.consumerCount
        producers += s.producerCount
    return tp_in, tp_out, r_in, r_out, topics, consumers, producers


def _merge(fields: dict[str, Column], f: str, col: Column) -> None:
    """One series into a broker's columns (:func:`_fill` when the field has one already)."""
    have = fields.get(f)
    if have is None:
        fields[f] = col
    else:
        _fill(have, col)


def _skipped_note(skipped: list[int]) -> list[str]:
    if not skipped:
        return []
    return [f"no sample from any broker at {len(skipped)} step(s) before this one "
            f"({iso_time(skipped[0])} to {iso_time(skipped[-1])}): those steps were left out"]


def _topic_ns(topic: str) -> str | None:
    m = re.fullmatch(r"(?:non-)?persistent://([^/]+)/([^/]+)/.+", topic, re.DOTALL)
    return f"{m.group(1)}/{m.group(2)}" if m else None


def _topic_ok(name: str) -> bool:
    return _topic_ns(name) is not None


def _int(v: float | None) -> int:
    if v is None or not math.isfinite(v) or v < 0:
        return 0
    return int(round(v))


def _safe(url: str) -> str:
    from lbctl.safe.redact import url_without_userinfo

    return url_without_userinfo(url)


def _limit(resource: str, raw: float | None) -> float:
    """The limit Pulsar divides by, in MiB: heap max / MiB (a double), direct max / MiB (Java
    ``long`` division, as ``LoadManagerShared.getSystemResourceUsage``); 100 when unknown."""
    if raw is None or not math.isfinite(raw) or raw <= 0:
        return 100.0
    if resource == "memory":
        return raw / MIB
    return float(int(raw) // MIB) or 100.0


#: the largest finite Java float
_F32_MAX = 3.4028234663852886e38


def usage_columns(percents: list[float], limits: list[float]) -> list[dict[str, float]]:
    """:func:`usage_for` of each step's percentage and limit, a column at a time: the first
    candidate of every step checked at once (``array("f")`` rounds a whole list to Java floats in
    C, as :func:`~lbctl.model.load.f32` rounds one), the search step by step only where that
    candidate is not the one. Inputs beyond a Java float's range go step by step too. A column
    against one limit (always so for CPU and bandwidth, 100; nearly always for memory) is
    computed against that one Java float, each rounding of a whole list made from a list, not
    from an iterator (``array`` grows one item at a time from an iterator: 2–3× slower, about
    half of this function's time measured on the 3 h × 100 brokers history)."""
    if not percents or max(map(abs, percents)) >= _F32_MAX or max(limits) >= _F32_MAX:
        return list(map(usage_for, percents, limits))
    targets = array("f", percents).tolist()
    lim0 = limits[0]
    if limits.count(lim0) == len(limits):  # one limit along the chunk (the usual case)
        den = array("f", [lim0])[0]
        if den == 0.0:
            return list(map(usage_for, percents, limits))
        # the first candidate: the percentage itself against 100, else its share of the limit
        firsts = targets if lim0 == 100.0 else array("f", [t / 100.0 * den
                                                           for t in targets]).tolist()
        if max(map(abs, firsts)) >= _F32_MAX:
            return list(map(usage_for, percents, limits))
        # ResourceUsage.percent of each: (float)usage / (float)limit * 100f, rounded at each step
        ps = array("f", [u / den for u in firsts]).tolist()
    else:
        dens = array("f", limits).tolist()
        if 0.0 in dens:
            return list(map(usage_for, percents, limits))
        scaled = map(operator.mul, map(operator.truediv, targets, repeat(100.0)), dens)
        firsts = [t if lim == 100.0 else u
                  for t, u, lim in zip(targets, array("f", scaled).tolist(), limits, strict=True)]
        if max(map(abs, firsts)) >= _F32_MAX:
            return list(map(usage_for, percents, limits))
        ps = array("f", list(map(operator.truediv, firsts, dens))).tolist()
    rs = array("f", [p * 100.0 for p in ps]).tolist()
    if rs == targets:  # every first candidate is the one (the usual case): no search
        return [{"usage": u, "limit": lim} for u, lim in zip(firsts, limits, strict=True)]
    return [{"usage": u, "limit": lim} if r == t else usage_for(pct, lim)
            for u, r, t, lim, pct in zip(firsts, rs, targets, limits, percents, strict=True)]
