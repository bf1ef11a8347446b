"""A history read chunk by chunk, the next chunk's answers read ahead by a worker thread while
this one is built and decoded on the building thread (``PrometheusHistory._chunks``): the same
sequence and the same requests as one chunk, and a failure in a later chunk is the same one-line
error, the worker stopped and the client closed cleanly. On an in-memory Prometheus (an
``httpx.MockTransport`` answering ``series`` and ``query_range``)."""

from __future__ import annotations

import threading
import time
from urllib.parse import parse_qs

import httpx  # noqa: TID253  # a mock Prometheus behind the client's transport API
import pytest

from lbctl.admin.errors import AdminError
from lbctl.admin.prometheus import PrometheusClient
from lbctl.sources.prometheus import HistoryRequest, read_history
from lbctl.sources.prometheus.history import PrometheusHistory
from tests.prom_helpers import matrix_answer, series_answer, series_labels

T0, STEP, STEPS = 1_700_000_040_000, 60_000, 12
BROKERS = ["b1:8080", "b2:8080"]
BUNDLES = ["t/ns/0x00000000_0x80000000", "t/ns/0x80000000_0xffffffff"]


def fake(fail_after: int | None = None, threads: list[str] | None = None,
         starts: list[float] | None = None) -> httpx.MockTransport:
    """Brokers b1 and b2 (b2 owns the second bundle), their five resources and per-bundle
    metrics at every step; ``fail_after``: range queries from that step on answer 400;
    ``threads``: the thread asking each range query, listed; ``starts``: each range query's
    start, listed as it is asked (the first chunk's queries answered slowly, 20 ms each)."""
    labels = series_labels

    def handler(req: httpx.Request) -> httpx.Response:
        q = parse_qs(req.url.query.decode())
        if threads is not None and req.url.path == "/api/v1/query_range":
            threads.append(threading.current_thread().name)
        if starts is not None and req.url.path == "/api/v1/query_range":
            starts.append(float(q["start"][0]))
            if starts[-1] * 1000 == T0:
                time.sleep(0.02)
        if req.url.path == "/api/v1/series":
            return series_answer(q, BROKERS)
        start, end = float(q["start"][0]), float(q["end"][0])
        if fail_after is not None and start * 1000 >= T0 + fail_after * STEP:
            return httpx.Response(400, json={"status": "error", "error": "bad chunk"})
        name = q["query"][0].removeprefix("last_over_time(").split("{")[0]
        times = [t / 1000 for t in range(int(start * 1000), int(end * 1000) + 1, STEP)
                 if t <= T0 + (STEPS - 1) * STEP]
        result = []
        for k, b in enumerate(BROKERS):
            if name.startswith("pulsar_bundle_"):
                result.append({"metric": {**labels(name, b), "bundle": BUNDLES[k]},
                               "values": [[t, str(k + t % 7)] for t in times]})
            else:
                result.append({"metric": labels(name, b),
                               "values": [[t, str(10 + k + t % 13)] for t in times]})
        return matrix_answer(result)

    return httpx.MockTransport(handler)


REQ = HistoryRequest(T0, T0 + (STEPS - 1) * STEP, STEP)


def test_chunks_read_ahead_make_the_same_sequence_as_one_chunk() -> None:
    with PrometheusClient("http://prom", transport=fake()) as c:
        whole, _ = read_history(c, REQ)
    with PrometheusClient("http://prom", transport=fake(), max_points=5) as c:
        assert len(PrometheusHistory(c, REQ)._plan()) == 3  # 13 steps: 5 + 5 + 3
        chunked, _ = read_history(c, REQ)
    assert len(whole) == STEPS and chunked == whole
    assert {b for s in whole for b in s.brokers} == set(BROKERS)
    assert whole[3].brokers["b2:8080"].lastStats[BUNDLES[1]].msgRateIn > 0


@pytest.mark.parametrize("fail_after", [5, 10])
def test_a_failing_later_chunk_is_the_error_and_the_worker_stops(fail_after: int) -> None:
    before = threading.active_count()
    with PrometheusClient("http://prom", transport=fake(fail_after), max_points=5,
                          sleep=lambda s: None) as c, pytest.raises(AdminError) as e:
        read_history(c, REQ)
    assert str(e.value) == "GET http://prom/api/v1/query_range: 400 Bad Request: bad chunk"
    assert threading.active_count() == before


def test_an_abandoned_read_stops_the_worker() -> None:
    before = threading.active_count()
    with PrometheusClient("http://prom", transport=fake(), max_points=2) as c:
        snaps = PrometheusHistory(c, REQ).snapshots()
        assert next(snaps)["capturedAt"]
        snaps.close()  # the consumer stops: the chunk being read ahead is cancelled
    assert threading.active_count() == before


def test_answers_read_ahead_are_decoded_on_the_building_thread(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker only waits on Prometheus; every answer is decoded where the snapshots are
    built (two threads decoding and building at once take turns on the interpreter, and the
    turns cost CPU), and each request is sent, counted and listed once, as without a worker."""
    from lbctl.admin import prometheus

    decoded_on: list[str] = []
    decode = prometheus._decode_range

    def spy(body: bytes, grid: tuple[int, int, int] | None = None) -> object:
        decoded_on.append(threading.current_thread().name)
        return decode(body, grid)

    monkeypatch.setattr(prometheus, "_decode_range", spy)
    asked_by: list[str] = []
    with PrometheusClient("http://prom", transport=fake(threads=asked_by), max_points=5) as c:
        ahead, _ = read_history(c, REQ)
        sent, requests = list(c.sent), c.requests
    with PrometheusClient("http://prom", transport=fake(), max_points=5,
                          trace=lambda line: None) as c:  # traced: every request its own
        alone, _ = read_history(c, REQ)
    assert ahead == alone
    assert (sent, requests) == (c.sent, c.requests)
    here = threading.current_thread().name
    assert decoded_on and set(decoded_on) == {here}
    assert here in asked_by and any(t.startswith("lbctl-prometheus") for t in asked_by)


def test_the_first_chunk_is_asked_alone_before_the_next_is_read_ahead() -> None:
    """Nothing is read ahead while the first chunk is awaited: Prometheus evaluates the
    chunk the building thread waits for on its own cores, not shared with the next chunk's
    queries (at 3 h × 100 brokers × 500 bundles, two chunks, that halved Prometheus' CPU
    during the first wait, 0.32 -> 0.16 s). The next chunk is read ahead once the first is
    answered, while it is decoded and built."""
    starts: list[float] = []
    with PrometheusClient("http://prom", transport=fake(starts=starts), max_points=5) as c:
        ahead, _ = read_history(c, REQ)
    with PrometheusClient("http://prom", transport=fake(), max_points=5,
                          trace=lambda line: None) as c:  # traced: nothing read ahead
        alone, _ = read_history(c, REQ)
    assert ahead == alone
    first = [k for k, s in enumerate(starts) if s * 1000 == T0]
    assert first and len(first) < len(starts)
    assert first == list(range(len(first)))  # every first-chunk query before any other
