"""Answers are made into columns while Prometheus still evaluates the later queries
(``PrometheusClient.query_ranges``' ``done``, used by ``PrometheusHistory._fetch``; issue 30:
the Prometheus read's wall time waited for the last answer before any column was made)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import httpx  # noqa: TID253  # a test of the HTTP client: its transport is httpx
import pytest

from lbctl.admin.errors import NotFound
from lbctl.admin.prometheus import PrometheusClient, RangeQuery, RangeResult

STEP = 60_000
T0 = 1_700_000_000_000
_OPEN: list[PrometheusClient] = []


@pytest.fixture(autouse=True)
def _clients_closed() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def prom(handler: Any, **kwargs: Any) -> PrometheusClient:
    client = PrometheusClient("http://prom", transport=httpx.MockTransport(handler), **kwargs)
    _OPEN.append(client)
    return client


def answer(q: str, value: str = "1") -> httpx.Response:
    return httpx.Response(200, content=json.dumps({"status": "success", "data": {
        "resultType": "matrix", "result": [
            {"metric": {"q": q}, "values": [[T0 / 1000, value]]}]}}).encode())


def queries(n: int) -> list[RangeQuery]:
    return [RangeQuery(f"q{i}", T0, T0, STEP) for i in range(n)]


def test_done_runs_in_order_before_the_last_answer() -> None:
    """The last query is answered only once ``done`` has had the first ones (or after 5 s, which
    the test then sees): the caller's work overlaps the wait."""
    taken: list[str] = []
    seen_before_last: list[list[str]] = []
    first_taken = asyncio.Event()

    async def handler(req: httpx.Request) -> httpx.Response:
        q = parse_qs(req.url.query.decode())["query"][0]
        if q == "q5":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(first_taken.wait(), 5)
            seen_before_last.append(list(taken))
        else:
            await asyncio.sleep(0.001 * (5 - int(q[1:])))  # answered out of order
        return answer(q)

    def done(i: int, res: RangeResult) -> None:
        taken.append(res.series[0].labels["q"])
        assert i == len(taken) - 1
        first_taken.set()

    c = prom(handler, max_concurrency=6)
    res = c.query_ranges(queries(6), done)
    assert [r.series[0].labels["q"] for r in res] == [f"q{i}" for i in range(6)]
    assert taken == [f"q{i}" for i in range(6)]  # each once, in the order given
    assert seen_before_last == [[f"q{i}" for i in range(5)]]


def test_the_freed_slot_is_asked_before_done_runs() -> None:
    """One request at a time: the next request is sent before ``done`` takes the answer in."""
    events: list[str] = []

    async def handler(req: httpx.Request) -> httpx.Response:
        q = parse_qs(req.url.query.decode())["query"][0]
        events.append(f"ask {q}")
        await asyncio.sleep(0)
        return answer(q)

    c = prom(handler, max_concurrency=1)
    c.query_ranges(queries(3), lambda i, _: events.append(f"done {i}"))
    assert events.index("ask q1") < events.index("done 0")
    assert events.index("ask q2") < events.index("done 1")
    assert sorted(e for e in events if e.startswith("done")) == ["done 0", "done 1", "done 2"]


def test_an_error_in_done_is_raised_after_every_answer() -> None:
    asked: list[str] = []

    async def handler(req: httpx.Request) -> httpx.Response:
        q = parse_qs(req.url.query.decode())["query"][0]
        asked.append(q)
        return answer(q)

    calls: list[int] = []

    def done(i: int, _: RangeResult) -> None:
        calls.append(i)
        if i == 1:
            raise ValueError("bad column")

    c = prom(handler, max_concurrency=2)
    with pytest.raises(ValueError, match="bad column"):
        c.query_ranges(queries(4), done)
    assert calls == [0, 1]  # no call after the error
    assert sorted(asked) == ["q0", "q1", "q2", "q3"]
    # the client is usable afterwards, and a hop left on its loop calls nothing
    again: list[int] = []
    c.query_ranges(queries(2), lambda i, _: again.append(i))
    assert again == [0, 1] and calls == [0, 1]


def test_a_failed_query_is_raised_as_without_done() -> None:
    async def handler(req: httpx.Request) -> httpx.Response:
        q = parse_qs(req.url.query.decode())["query"][0]
        if q == "q2":
            return httpx.Response(404, json={"status": "error", "error": "gone"})
        return answer(q)

    def done(i: int, _: RangeResult) -> None:
        raise ValueError("never raised: the query's error comes first")

    with pytest.raises(NotFound):
        prom(handler, retries=0).query_ranges(queries(4), done)
    with pytest.raises(NotFound):
        prom(handler, retries=0).query_ranges(queries(4))


def test_history_columns_are_made_before_the_last_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """``PrometheusHistory._fetch`` hands its column building to ``done``: a chunk's first
    answers are columns before its last query returns."""
    from lbctl.sources.prometheus import history as hi
    from lbctl.sources.prometheus.catalog import Layout
    from lbctl.sources.prometheus.request import HistoryRequest, Report

    made: list[int] = []
    orig_column = hi.Grid.column

    def column(self: Any, times: list[int], values: list[float]) -> Any:
        made.append(len(values))
        return orig_column(self, times, values)

    monkeypatch.setattr(hi.Grid, "column", column)
    seen: list[int] = []

    class Client:
        def query_ranges(self, qs: list[RangeQuery],
                         done: Any = None) -> list[RangeResult]:
            from lbctl.admin.prometheus import Series

            out = [RangeResult([Series({"cluster": "c", "broker": "b:8080"}, [T0], [1.0])], [])
                   for _ in qs]
            assert done is not None, "the columns wait for the last answer"
            for i, r in enumerate(out):
                seen.append(len(made))
                done(i, r)
            return out

    h = object.__new__(hi.PrometheusHistory)
    h.client = Client()  # type: ignore[assignment]
    h.req = HistoryRequest(T0, T0, STEP)
    h.report = Report()
    h._instance_broker = {}
    h.layout = Layout("c", "modular", "bundles",
                         {"resources.cpu": ["pulsar_lb_cpu_usage"],
                          "resources.memory": ["pulsar_lb_memory_usage"]}, {}, 1)
    chunk = h._fetch(T0, T0)
    assert seen == [0, 1]  # the second answer came after the first was a column
    assert set(chunk.brokers["resources"]["b:8080"]) == {"cpu", "memory"}


def test_bundles_are_sealed_before_the_counters_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bundles' columns are sealed once their last query is taken: the counters' answers,
    which come after, find them sealed; a chunk without bundle queries is sealed at the end."""
    from lbctl.admin.prometheus import Series
    from lbctl.sources.prometheus import history as hi
    from lbctl.sources.prometheus.catalog import Layout
    from lbctl.sources.prometheus.request import HistoryRequest, Report

    sealed: list[int] = []
    orig_seal = hi.BundleColumns.seal
    seen: list[tuple[str, int]] = []

    def seal(self: Any) -> None:
        sealed.append(1)
        orig_seal(self)

    monkeypatch.setattr(hi.BundleColumns, "seal", seal)

    class Client:
        def query_ranges(self, qs: list[RangeQuery], done: Any = None) -> list[RangeResult]:
            out = []
            for q in qs:
                labels = {"cluster": "c", "broker": "b:8080"}
                if "bundle" in q.query:
                    labels["bundle"] = "public/default/0x00000000_0xffffffff"
                out.append(RangeResult([Series(labels, [T0], [1.0])], []))
            for i, (q, r) in enumerate(zip(qs, out, strict=True)):
                seen.append((q.query.split("{")[0].split("(")[-1], len(sealed)))
                done(i, r)
            return out

    def history(names: dict[str, list[str]]) -> Any:
        h = object.__new__(hi.PrometheusHistory)
        h.client = Client()  # type: ignore[assignment]
        h.req = HistoryRequest(T0, T0, STEP)
        h.report = Report()
        h._instance_broker = {}
        h.layout = Layout("c", "modular", "bundles", names, {}, 1)
        return h

    chunk = history({"resources.cpu": ["pulsar_lb_cpu_usage"],
                     "bundles.msgRateIn": ["pulsar_bundle_msg_rate_in"],
                     "counters.unloadedBundles": ["pulsar_lb_unload_bundle_total"]}
                    )._fetch(T0, T0)
    assert seen == [("pulsar_lb_cpu_usage", 0), ("pulsar_bundle_msg_rate_in", 0),
                    ("pulsar_lb_unload_bundle_total", 1)]
    assert sealed == [1] and list(chunk.bundles.rows) == ["b:8080"]
    sealed.clear()
    seen.clear()
    history({"resources.cpu": ["pulsar_lb_cpu_usage"]})._fetch(T0, T0)
    assert sealed == [1]  # no bundle query: sealed after the answers
