"""A history's snapshots read without a JSON round trip (``lbctl.sources.prometheus.output``): the
typed per-bundle stats checked column by column, the rest decoded into the snapshot records, the
line written by msgspec when that writes orjson's bytes. Pinned against the JSON path every
snapshot took before (orjson's line, read back as a ``.jsonl`` line): the same states and the
same bytes, and for hostile sample values (negative, huge, beyond a Java type) the same one-line
error — or one line where that path raised a traceback. On an in-memory Prometheus (an
``httpx.MockTransport``) whose bundles move, and are carried by two brokers at one step."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx  # noqa: TID253  # a mock Prometheus behind the client's transport API
import msgspec
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.admin.prometheus import PrometheusClient
from lbctl.errors import SnapshotError
from lbctl.model.cluster import ClusterState
from lbctl.sources.prometheus import HistoryRequest, read_history, write_history
from lbctl.sources.prometheus.history import PLAIN_FLOAT, PrometheusHistory
from lbctl.sources.prometheus.output import checked
from lbctl.sources.snapshot import jsonl_snapshot
from tests.prom_helpers import LB_SERIES, matrix_answer, series_answer, series_labels

T0, STEP, STEPS = 1_700_000_040_000, 60_000, 12
BROKERS = ["b1:8080", "b2:8080", "b3:8080"]
BUNDLES = [f"t/ns/0x{i * 0x40000000:08x}_0x{min((i + 1) * 0x40000000, 0xffffffff):08x}"
           for i in range(4)]
FIELDS = ("msg_rate_in", "msg_throughput_in", "msg_rate_out", "msg_throughput_out",
          "topics_count", "consumer_count", "producer_count")
REQ = HistoryRequest(T0, T0 + (STEPS - 1) * STEP, STEP)

#: metric name (without ``pulsar_``) → the text of its value at (broker, bundle index, step)
Values = Callable[[str, str, int, int], str]


def carriers(j: int, k: int) -> list[str]:
    """Who carries bundle ``j`` at step ``k``: the third moves from b1 to b3 at step 6 (both
    carry it at that step: it moved between their scrapes), the last broker b3 is not
    scraped at step 8."""
    out = {0: ["b1:8080"], 1: ["b2:8080"], 3: ["b3:8080"]}.get(j)
    if out is None:
        out = ["b1:8080"] if k < 6 else ["b1:8080", "b3:8080"] if k == 6 else ["b3:8080"]
    return out


def ordinary(name: str, b: str, j: int, k: int) -> str:
    if name.startswith("jvm_"):  # the heap's and direct memory's limits: 4 GiB, 1 GiB
        return "4294967296" if "direct" not in name else "1073741824"
    base = {"msg_rate_in": 10.5, "msg_throughput_in": 1e4 / 3, "msg_rate_out": 0.1,
            "msg_throughput_out": 2.5e5, "topics_count": 3, "consumer_count": 2,
            "producer_count": 1}.get(name, 20.0 + j)
    return repr(base * (j + 1) + k / 7 + BROKERS.index(b) if "count" not in name
                else base + (j + k) % 3)


def fake(values: Values = ordinary) -> httpx.MockTransport:
    labels = series_labels

    def handler(req: httpx.Request) -> httpx.Response:
        q = parse_qs(req.url.query.decode())
        if req.url.path == "/api/v1/series":
            return series_answer(q, BROKERS, (*LB_SERIES, "jvm_memory_"))
        start, end = float(q["start"][0]), float(q["end"][0])
        name = q["query"][0].removeprefix("last_over_time(").split("{")[0]
        short = name.removeprefix("pulsar_").removeprefix("bundle_")
        ks = [k for k in range(STEPS) if start * 1000 <= T0 + k * STEP <= end * 1000]
        result = []
        for b in BROKERS:
            if name.startswith("pulsar_bundle_"):
                for j, bundle in enumerate(BUNDLES):
                    pts = [[(T0 + k * STEP) / 1000, values(short, b, j, k)] for k in ks
                           if b in carriers(j, k)]
                    if pts:
                        result.append({"metric": {**labels(name, b), "bundle": bundle},
                                       "values": pts})
            else:
                pts = [[(T0 + k * STEP) / 1000, values(short, b, 0, k)] for k in ks
                       if not (b == "b3:8080" and k == 8)]
                result.append({"metric": labels(name, b), "values": pts})
        return matrix_answer(result)

    return httpx.MockTransport(handler)


def the_json_path(values: Values = ordinary, **kw: int) -> list[tuple[ClusterState, bytes]]:
    """Each snapshot as it was read before: its orjson line (typed stats as their fields), read
    back by the ``.jsonl`` reader."""
    with PrometheusClient("http://prom", transport=fake(values), **kw) as c:
        out = []
        for number, snap in enumerate(PrometheusHistory(c, REQ).snapshots(), start=1):
            line = orjson.dumps(snap, default=msgspec.structs.asdict,
                                option=orjson.OPT_APPEND_NEWLINE)
            out.append((jsonl_snapshot(f"prometheus:{snap['capturedAt']}", line, number,
                                       last=False, check_keys=False), line))
        return out


def read(values: Values = ordinary, **kw: int) -> list[tuple[ClusterState, bytes]]:
    """Each snapshot's state as :func:`checked` reads it, and its line as it writes it (a write
    makes no state of a snapshot known valid: ``None`` there, else the same state)."""
    with PrometheusClient("http://prom", transport=fake(values), **kw) as c:
        states = [s for s, _ in checked(PrometheusHistory(c, REQ), write=False)]
    with PrometheusClient("http://prom", transport=fake(values), **kw) as c:
        written = list(checked(PrometheusHistory(c, REQ), write=True))
    assert None not in states
    assert [s for s, _ in written if s is not None] == [
        want for (s, _), want in zip(written, states, strict=True) if s is not None]
    return [(state, line) for state, (_, line) in zip(states, written, strict=True)]


def test_a_write_makes_no_state_of_a_snapshot_known_valid() -> None:
    """Only the lines are written: a snapshot whose checks are known to pass is checked and
    written, no state made (the first is read the checked way, which learns the names)."""
    with PrometheusClient("http://prom", transport=fake(ordinary)) as c:
        written = [s for s, _ in checked(PrometheusHistory(c, REQ), write=True)]
    assert written[0] is not None
    assert written.count(None) >= STEPS - 2


def flags(values: Values = ordinary) -> list[tuple[bool, bool]]:
    with PrometheusClient("http://prom", transport=fake(values)) as c:
        return [(clean, plain) for _, clean, plain in PrometheusHistory(c, REQ).built()]


def big(name: str, b: str, j: int, k: int) -> str:
    """Throughputs of 1e16 and more (orjson writes ``1e+16``, msgspec ``1e16``) at some steps."""
    if name == "msg_throughput_out" and k % 4 == 1:
        return repr(PLAIN_FLOAT * (j + 1.5))
    return ordinary(name, b, j, k)


@pytest.mark.parametrize("values", [ordinary, big], ids=["ordinary", "floats-of-1e16"])
@pytest.mark.parametrize("max_points", [100, 5], ids=["one-chunk", "chunks-of-5"])
def test_the_states_and_lines_are_those_of_the_json_path(values: Values, max_points: int) -> None:
    got = read(values, max_points=max_points)
    want = the_json_path(values, max_points=max_points)
    assert len(got) == STEPS  # b3 not scraped at step 8: left out of that snapshot
    assert [line for _, line in got] == [line for _, line in want]
    assert [state for state, _ in got] == [state for state, _ in want]
    moved = [s.observed.moves for s, _ in got if s.observed and s.observed.moves]
    assert moved and got[6][0].brokers["b3:8080"].lastStats.keys() >= {BUNDLES[2]}


@pytest.mark.parametrize("max_points", [100, 5, 2], ids=["one-chunk", "chunks-of-5", "of-2"])
def test_each_step_has_the_owners_stats_and_sums_the_samples_say(max_points: int) -> None:
    """Against the fake's own figures, not the code's: who carries what at each step (the moved
    bundle on both brokers at step 6 stays with b3, which still carries it at the next step), each
    bundle's stats, and each report's sums in name order, one addition at a time
    (``LocalBrokerData.update``)."""
    states = [s for s, _ in read(max_points=max_points)]
    for k, state in enumerate(states):
        for b, local in state.brokers.items():
            want = [BUNDLES[j] for j in range(4)
                    if carriers(j, k)[-1] == b]  # the last carrier: b3 at step 6
            assert list(local.lastStats) == want, (k, b)
            total = 0.0
            for name, stats in local.lastStats.items():
                j = BUNDLES.index(name)
                assert stats.msgRateIn == float(ordinary("msg_rate_in", b, j, k))
                assert stats.topics == round(float(ordinary("topics_count", b, j, k)))
                total += stats.msgRateIn
            assert local.msgRateIn == total
            assert local.numTopics == sum(s.topics for s in local.lastStats.values())
        assert ("b3:8080" in state.brokers) == (k != 8)


def test_ordinary_snapshots_take_the_typed_path_and_big_floats_the_json_one() -> None:
    assert flags() == [(True, True)] * STEPS
    # a chunk's stats of 1e16 or more are not clean: their broker's snapshots go the JSON way
    assert (False, False) in flags(big)


def hostile(metric: str, value: str, bundles: range = range(4)) -> Values:
    def values(name: str, b: str, j: int, k: int) -> str:
        return value if name == metric and k == 3 and j in bundles else ordinary(name, b, j, k)
    return values


AT = "prometheus:2023-11-14T22:17:00Z"


def _refused(values: Any, how: str, tmp_path: Path) -> str:
    """The one-line error of reading (or writing) a history whose answers are ``values``."""
    with (PrometheusClient("http://prom", transport=fake(values)) as c,
          pytest.raises(SnapshotError) as e):
        if how == "read":
            read_history(c, REQ)
        else:
            write_history(c, REQ, str(tmp_path / "h.jsonl"))
    return str(e.value)


@pytest.mark.parametrize(("metric", "value", "message"), [
    ("msg_rate_out", "-3", f'{AT} at brokers["b1:8080"].msgRateOut: expected a number >= 0, '
                           "got -6.0"),
    # one bundle's, its broker's sum still ≥ 0: only the stats' own check sees it
    ("msg_rate_in:0", "-3", f'{AT} at brokers["b1:8080"].lastStats["{BUNDLES[0]}"].msgRateIn: '
                            "expected a number >= 0, got -3.0"),
    ("msg_rate_in", "1e308", f'{AT} at brokers["b1:8080"].msgRateIn: expected a number, got null'),
    ("consumer_count", "3e9", f'{AT} at brokers["b1:8080"].numConsumers: expected an integer '
                              "within the range of a Java int, got 6000000000"),
    ("topics_count", "1e300", f'{AT} at brokers["b1:8080"].numTopics: expected an integer '
                              "within the range of a Java int, got 2000000000000000105009520510408840497..."),
])
@pytest.mark.parametrize("how", ["read", "write"])
def test_a_hostile_value_is_the_json_path_s_one_line_error(metric: str, value: str, message: str,
                                                           how: str, tmp_path: Path) -> None:
    """Values the columns refuse are read the checked way: the error of the JSON line, word for
    word (a count beyond 64 bits, which orjson cannot write, was a traceback: now one line)."""
    metric, _, only = metric.partition(":")
    values = hostile(metric, value, range(int(only), int(only) + 1) if only else range(4))
    error = _refused(values, how, tmp_path)
    assert error.startswith(message) and "\n" not in error
    assert not (tmp_path / "h.jsonl").exists()


@pytest.mark.parametrize("given", [
    {"lb_cpu_usage": "1e300"}, {"lb_cpu_usage": "-50"}, {"lb_memory_usage": "1e39"},
    {"lb_memory_usage": "3e14"},  # a usage of 1e16 or more (against a limit of 4096 MiB)
    {"jvm_memory_bytes_max": "1e30"}, {"jvm_memory_direct_bytes_max": "1e-30"},
    {"jvm_memory_bytes_max": "1e30", "lb_memory_usage@*": "0"},  # a limit of 1e16 or more
    {"msg_throughput_out": "6e15"},  # each below 1e16, their sum not
    {"msg_throughput_out@6": "6e15"},  # the same at the step two brokers carry a bundle
], ids=str)
def test_hostile_values_the_snapshot_accepts_are_read_as_the_json_path_reads_them(
        given: dict[str, str]) -> None:
    """Floats of 1e16 and more are written by orjson (msgspec writes them otherwise)."""
    def values(name: str, b: str, j: int, k: int) -> str:
        """``name``'s value at step 3, ``name@k``'s at step k, ``name@*``'s at every step."""
        for key in (f"{name}@{k}", f"{name}@*", name if k == 3 else ""):
            if key in given:
                return given[key]
        return ordinary(name, b, j, k)

    got, want = read(values), the_json_path(values)
    assert got == want


@settings(derandomize=True, max_examples=300)
@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: abs(x) < PLAIN_FLOAT))
def test_msgspec_writes_plain_floats_as_orjson_does(x: float) -> None:
    """What the typed path's lines rest on (a newer msgspec or orjson that formats otherwise
    fails here, not in a user's file)."""
    assert msgspec.json.encode([x, -x]) == orjson.dumps([x, -x])


def test_a_file_in_a_missing_directory_is_named_as_asked_before_any_request(
        tmp_path: Path) -> None:
    """`-f DIR/h.jsonl` in a directory that does not exist: the error names that file, as
    `snapshot export` does, not the temporary file beside it (`.h.jsonl.x1y2.tmp` was named), and
    Prometheus is not asked anything."""
    asked: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        asked.append(str(req.url))
        return httpx.Response(500)

    path = str(tmp_path / "missing" / "h.jsonl")
    with (PrometheusClient("http://prom", transport=httpx.MockTransport(handler)) as c,
          pytest.raises(SnapshotError) as e):
        write_history(c, REQ, path)
    assert str(e.value) == f"{path}: cannot write: No such file or directory"
    assert asked == []


def test_the_last_snapshot_observes_only_a_step_that_is_over() -> None:
    """The last snapshot's ``observed`` is what happened until one step later; a range asked at
    an instant (``--since``: now) inside that step does not read it, so the last snapshot has no
    ``observed`` — before, it counted the part of the step already scraped as the whole step
    (a run 2 s after the end claimed what the leader did in the next 15 s)."""
    end = T0 + (STEPS - 2) * STEP  # the fake serves one more step after it
    over = HistoryRequest(T0, end, STEP, horizon_ms=end + STEP)
    running = HistoryRequest(T0, end, STEP, horizon_ms=end + STEP // 3)
    for req, last_observed in ((over, True), (running, False),
                               (HistoryRequest(T0, end, STEP), True)):
        with PrometheusClient("http://prom", transport=fake(ordinary)) as c:
            states, _ = read_history(c, req)
        assert len(states) == STEPS - 1
        assert (states[-1].observed is not None) is last_observed, req
        assert states[-2].observed is not None


@pytest.mark.parametrize(("step", "broker"), [(3, "b1:8080"), (6, "b3:8080")],
                         ids=["bundles-of-one-broker", "a-bundle-on-two-brokers"])
@pytest.mark.parametrize("how", ["read", "write"])
def test_counts_each_within_a_java_int_summed_beyond_it_are_the_json_path_s_error(
        step: int, broker: str, how: str, tmp_path: Path) -> None:
    """Each bundle's consumers within a Java int (2e9), a broker's sum of them not: the error
    of the JSON line, word for word. The sums are checked a chunk at a time (the rows of
    brokers carrying their bundles alone, or a step's sums where a bundle has two carriers:
    step 6, settled to b3), and a snapshot they pass has its figures not looked at again."""
    def values(name: str, b: str, j: int, k: int) -> str:
        return "2e9" if name == "consumer_count" and k == step else ordinary(name, b, j, k)

    at = f"prometheus:2023-11-14T22:{14 + step:02d}:00Z"
    error = _refused(values, how, tmp_path)
    assert error.startswith(
        f'{at} at brokers["{broker}"].numConsumers: expected an integer within the range of a '
        "Java int, got 4000000000") and "\n" not in error
    assert not (tmp_path / "h.jsonl").exists()
