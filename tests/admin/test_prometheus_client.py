"""The Prometheus HTTP client: chunking, retries, timeouts, partial data, auth — on a mock
transport (the real Prometheus is in tests/sources/test_prometheus_*.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs

import httpx  # noqa: TID253  # a test of the HTTP client: its transport is httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.admin.errors import ConnectionFailed, NotFound, RequestTimeout, ServerError
from lbctl.admin.prometheus import (
    MAX_POINTS,
    PartialData,
    PrometheusClient,
    PrometheusConfig,
    client_from_config,
    plan_chunks,
    split_userinfo,
)
from lbctl.errors import ExitStatus, UsageError

STEP = 60_000
T0 = 1_700_000_000_000
_OPEN: list[PrometheusClient] = []


@pytest.fixture(autouse=True)
def _clients_closed() -> Iterator[None]:
    """Every client a test makes is closed after it (its event loop with it)."""
    yield
    while _OPEN:
        _OPEN.pop().close()


def prom(*args: Any, **kwargs: Any) -> PrometheusClient:
    client = PrometheusClient(*args, **kwargs)
    _OPEN.append(client)
    return client


def prom_from(*args: Any, **kwargs: Any) -> PrometheusClient:
    client = client_from_config(*args, **kwargs)
    _OPEN.append(client)
    return client


@settings(derandomize=True, deadline=None)  # the same cases in CI; a loaded machine is no failure
@given(start=st.integers(0, 10**6), steps=st.integers(1, 5000), series=st.integers(1, 10**5),
       max_points=st.integers(1, 12000), max_samples=st.integers(1, 10**7))
def test_chunks_cover_the_grid_exactly(start: int, steps: int, series: int, max_points: int,
                                       max_samples: int) -> None:
    end = start + (steps - 1) * STEP + 59_999  # an end off the grid: the last step is <= end
    chunks = plan_chunks(start, end, STEP, series, max_points=max_points, max_samples=max_samples)
    grid = [t for s, e in chunks for t in range(s, e + 1, STEP)]
    assert grid == [start + i * STEP for i in range(steps)]
    per = max(1, min(max_points, max_samples // series))
    assert all((e - s) // STEP + 1 <= per for s, e in chunks)
    assert len(chunks) == -(-steps // per)


def test_a_week_at_one_minute_is_chunked_under_prometheus_limit() -> None:
    week = 7 * 24 * 60
    chunks = plan_chunks(T0, T0 + (week - 1) * STEP, STEP, series=1)
    assert len(chunks) == 1 and MAX_POINTS == 11_000
    chunks = plan_chunks(T0, T0 + (2 * week - 1) * STEP, STEP, series=1)
    assert len(chunks) == 2  # 20,160 points > 11,000
    # 10,000 bundles: the sample budget (2 million) cuts far below 11,000 points
    chunks = plan_chunks(T0, T0 + (week - 1) * STEP, STEP, series=10_000)
    assert all((e - s) // STEP + 1 <= 200 for s, e in chunks)


def matrix(series: list[tuple[dict[str, str], list[tuple[Any, ...]]]],
           warnings: list[str] | None = None, *, compact: bool = False) -> bytes:
    """A range answer; ``compact``: without spaces, as Prometheus writes it."""
    body: dict[str, object] = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": m, "values": [list(pair) for pair in vals]} for m, vals in series]}}
    if warnings:
        body["warnings"] = warnings
    return json.dumps(body, separators=(",", ":") if compact else None).encode()


def range_server(requests: list[httpx.Request], *, fail: dict[int, int] | None = None,
                 warnings: list[str] | None = None):
    """Answers query_range with one series whose value at t is t (seconds); ``fail`` maps the
    n-th request (0-based) to a status."""
    fail = fail or {}

    def handler(req: httpx.Request) -> httpx.Response:
        n = len(requests)
        requests.append(req)
        if n in fail:
            return httpx.Response(fail[n], json={"status": "error", "errorType": "unavailable",
                                                 "error": "overloaded"})
        q = parse_qs(req.url.query.decode())
        s, e, step = float(q["start"][0]), float(q["end"][0]), float(q["step"][0])
        ts = []
        t = s
        while t <= e + 1e-9:
            ts.append((t, str(t)))
            t += step
        return httpx.Response(200, content=matrix([({"instance": "b1"}, ts)], warnings))

    return httpx.MockTransport(handler)


def test_query_range_is_chunked_and_merged() -> None:
    reqs: list[httpx.Request] = []
    c = prom("http://prom", transport=range_server(reqs), max_points=10)
    res = c.query_range("up", T0, T0 + 24 * STEP, STEP)
    assert len(reqs) == 3  # 25 points in 10 + 10 + 5
    assert [len(parse_qs(r.url.query.decode())["start"]) for r in reqs] == [1, 1, 1]
    (series,) = res.series
    assert sorted(series.points) == [T0 + i * STEP for i in range(25)]
    assert series.points[T0 + 3 * STEP] == (T0 + 3 * STEP) / 1000
    q = parse_qs(reqs[0].url.query.decode())
    assert q["timeout"] == ["30s"] and q["step"] == ["60"]


def test_answers_asked_on_the_main_thread_are_not_repred(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """``asyncio.Runner`` puts the SIGINT handler back at the end of a run on the main thread,
    and ``signal.signal`` reprs the handler it replaces (the finished task, with its result):
    the answers are handed back aside, never repr'd (0.1–0.3 s of CPU for a history's)."""
    import signal
    import threading

    from lbctl.admin import prometheus

    assert threading.current_thread() is threading.main_thread()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # what Runner checks
    repred: list[int] = []
    monkeypatch.setattr(prometheus.RangeResult, "__repr__",
                        lambda self: repred.append(1) or "RangeResult(...)")
    c = prom("http://prom", transport=range_server([]))
    assert [len(r.series) for r in c.query_ranges([prometheus.RangeQuery("up", T0, T0, STEP)] * 2)
            ] == [1, 1]
    assert repred == []


def test_too_many_samples_halves_the_chunk() -> None:
    reqs: list[httpx.Request] = []
    inner = range_server(reqs)

    def handler(req: httpx.Request) -> httpx.Response:
        q = parse_qs(req.url.query.decode())
        if float(q["end"][0]) - float(q["start"][0]) > 5 * 60:
            reqs.append(req)
            return httpx.Response(422, json={
                "status": "error", "errorType": "execution",
                "error": "query processing would load too many samples into memory in query "
                         "execution"})
        return inner.handle_request(req)

    c = prom("http://prom", transport=httpx.MockTransport(handler))
    res = c.query_range("up", T0, T0 + 19 * STEP, STEP)
    assert sorted(res.series[0].points) == [T0 + i * STEP for i in range(20)]


def test_unavailable_is_retried_boundedly() -> None:
    reqs: list[httpx.Request] = []
    sleeps: list[float] = []
    c = prom("http://prom", transport=range_server(reqs, fail={0: 503, 1: 503}),
                         sleep=sleeps.append)
    assert c.query_range("up", T0, T0, STEP).series
    assert len(reqs) == 3 and sleeps == [0.5, 1.0]
    reqs.clear()
    c = prom("http://prom", transport=range_server(reqs, fail={0: 503, 1: 503, 2: 503}),
                         sleep=sleeps.append)
    with pytest.raises(ServerError) as e:
        c.query_range("up", T0, T0, STEP)
    assert len(reqs) == 3
    assert str(e.value) == "GET http://prom/api/v1/query_range: 503 Service Unavailable: overloaded"
    assert e.value.exit_code == ExitStatus.SERVER_ERROR


def test_a_429_retry_after_is_waited_for_up_to_the_cap() -> None:
    answers = iter([("7", 429), ("2", 429), (None, 200)])
    sleeps: list[float] = []

    def handler(req: httpx.Request) -> httpx.Response:
        after, status = next(answers)
        if status == 429:
            return httpx.Response(429, headers={"Retry-After": after}, json={"error": "slow down"})
        return httpx.Response(200, content=matrix([({"instance": "b1"}, [(T0 / 1000, "1")])]))

    c = prom("http://prom", transport=httpx.MockTransport(handler), sleep=sleeps.append)
    assert c.query_range("up", T0, T0, STEP).series
    assert sleeps == [5.0, 2.0]  # the shared policy: Retry-After of a 429, capped at 5 s


def test_a_bad_query_is_not_retried() -> None:
    reqs: list[httpx.Request] = []
    c = prom("http://prom", transport=range_server(reqs, fail={0: 404}))
    with pytest.raises(NotFound):
        c.series(["up"], T0, T0)
    assert len(reqs) == 1


def test_partial_data_is_an_error_unless_allowed() -> None:
    reqs: list[httpx.Request] = []
    t = range_server(reqs, warnings=["store unavailable: partial response"])
    with pytest.raises(PartialData) as e:
        prom("http://prom", transport=t).query_range("up", T0, T0, STEP)
    assert "partial data (store unavailable: partial response)" in str(e.value)
    assert "--allow-partial" in str(e.value) and "\n" not in str(e.value)
    res = prom("http://prom", transport=t, allow_partial=True).query_range(
        "up", T0, T0, STEP)
    assert res.warnings == ["store unavailable: partial response"] and res.series


def test_slow_and_down_are_one_line_errors() -> None:
    def slow(req: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=req)

    c = prom("http://prom", transport=httpx.MockTransport(slow), timeout=2)
    with pytest.raises(RequestTimeout) as e:
        c.query_range("up", T0, T0, STEP)
    assert str(e.value) == "GET http://prom/api/v1/query_range: no answer within 2 s (--request-timeout)"

    calls = []

    def down(req: httpx.Request) -> httpx.Response:
        calls.append(req)
        raise httpx.ConnectError("[Errno 111] Connection refused", request=req)

    c = prom("http://prom", transport=httpx.MockTransport(down), sleep=lambda s: None)
    with pytest.raises(ConnectionFailed) as e2:
        c.series(["up"], T0, T0)
    assert "cannot connect (connection refused)" in str(e2.value)
    assert len(calls) == 3  # retried twice: a refused connection never reached Prometheus


def test_answers_that_are_not_prometheus_are_errors() -> None:
    def html(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"<html>login</html>")

    with pytest.raises(Exception, match="not JSON"):
        prom("http://p", transport=httpx.MockTransport(html)).series(["up"], T0, T0)

    def odd(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"status": "success", "data": {"resultType": "vector",
                                                                        "result": []}})

    with pytest.raises(Exception, match="expected a matrix"):
        prom("http://p", transport=httpx.MockTransport(odd)).query_range(
            "up", T0, T0, STEP)


def test_nan_and_inf_samples_are_missing_not_zero() -> None:
    def handler(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=matrix([({"a": "1"}, [(T0 / 1000, "NaN"),
                                                                 (T0 / 1000 + 60, "+Inf"),
                                                                 (T0 / 1000 + 120, "2.5")])]))

    res = prom("http://p", transport=httpx.MockTransport(handler)).query_range(
        "x", T0, T0 + 2 * STEP, STEP)
    assert res.series[0].points == {T0 + 2 * STEP: 2.5}


def test_bearer_and_basic_auth_and_redaction(tmp_path) -> None:
    seen: list[str | None] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.headers.get("authorization"))
        return httpx.Response(401, text="<html><title>Unauthorized</title></html>",
                              headers={"content-type": "text/html"})

    token = tmp_path / "token"
    token.write_text("s3cr3t-token\n")
    c = prom_from(PrometheusConfig("http://prom:9090", auth_plugin="token",
                                            auth_params=f"file://{token}"),
                           transport=httpx.MockTransport(handler))
    with pytest.raises(Exception) as e:
        c.series(["up"], T0, T0)
    assert seen[-1] == "Bearer s3cr3t-token"
    assert "401 Unauthorized" in str(e.value) and "s3cr3t" not in str(e.value)
    c = prom_from(PrometheusConfig("https://ops:pa%3Ass@prom:9090/"),
                           transport=httpx.MockTransport(handler))
    assert c.url == "https://prom:9090"
    with pytest.raises(Exception) as e:
        c.series(["up"], T0, T0)
    assert seen[-1] == "Basic b3BzOnBhOnNz"  # ops:pa:ss
    assert "pa:ss" not in str(e.value) and "ops" not in str(e.value)


def test_urls_are_checked_and_userinfo_split() -> None:
    with pytest.raises(UsageError, match="must start with http"):
        prom_from(PrometheusConfig("prom:9090"))
    assert split_userinfo("http://u:p@h:1/x?y") == ("http://h:1/x?y", ("u", "p"))
    assert split_userinfo("http://h") == ("http://h", None)


# ---- answers decoded straight into records, and the checked way ----------------------------------
def go_float(x: float) -> str:
    """A sample value as Prometheus writes it (``strconv.FormatFloat(v, 'f', -1, 64)``: the
    shortest digits that read back, never an exponent; ``NaN``, ``+Inf``, ``-Inf``)."""
    import decimal
    import math

    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    text = format(decimal.Decimal(repr(x)), "f")
    return text[:-2] if text.endswith(".0") else text


_VALUES = st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(go_float),
                    st.sampled_from(["-0", "0", "1e5", " 1", "1_0", ".5", "-0.0", "1E5", "1e400",
                                     "2,3", "[2", "]4", "1,\"2", "", "-", "01", "+1"]),
                    st.floats(-1e6, 1e6))
_TIMES = st.one_of(st.integers(0, 30).map(lambda k: (T0 + k * STEP) / 1000),  # on the grid
                   st.floats(-10, 3e11), st.sampled_from(["1700000000", "NaN", "x"]))


@settings(max_examples=300, derandomize=True, deadline=None)
@given(series=st.lists(st.tuples(st.dictionaries(st.sampled_from(["a", "b", "instance"]),
                                                 st.text(max_size=3), max_size=2),
                                 st.lists(st.one_of(st.tuples(_TIMES, _VALUES),
                                                    st.tuples(_TIMES, _VALUES, _VALUES)),
                                          max_size=6)),
                       max_size=3),
       dense=st.integers(0, 31), compact=st.booleans())
def test_the_typed_decoding_reads_what_the_checked_one_reads(series, dense: int,
                                                             compact: bool) -> None:
    """Any answer — on the grid or off it, odd values (NaN, +Inf, -0, 1e5, not numbers, strings
    holding commas or brackets), odd times, a third item in a pair; written with spaces or, as
    Prometheus writes it, without (the columns' way, :func:`lbctl.admin.prometheus._columns_of`)
    — gives the same series, or the same one-line error, as the sample-by-sample checked reading
    every answer went through before (``PrometheusClient._series_checked``)."""
    from lbctl.admin import prometheus as p

    grid = [((T0 + k * STEP) / 1000, str(k)) for k in range(dense)]  # a run of the grid
    body = matrix([*series, ({"dense": "1"}, grid)], compact=compact)
    c = prom("http://prom")

    def outcome(fn: Any) -> Any:
        try:
            return [(s.labels, s.points, len(s.times) == len(s.values)) for s in fn()]
        except Exception as e:  # the same error, word for word
            return (type(e), str(e))

    def typed() -> list[Any]:
        answer = p._decode_range(body)
        if answer is not None:
            fast = p._fast_series(answer, T0, T0 + 30 * STEP, STEP)
            if fast is not None:
                return fast
        return c._series_checked(json.loads(body)["data"])

    assert outcome(typed) == outcome(lambda: c._series_checked(json.loads(body)["data"]))


def test_samples_written_as_prometheus_writes_them_are_read_as_columns() -> None:
    """The columns' way takes exactly ``[[t,"v"],…]`` with numbers in both places; anything
    else — a string that would split into numbers, a third item, a bracket inside a value, a
    space, NaN — is left to the pair-by-pair decoding (whose result the property test above
    compares with the checked reading's)."""
    from lbctl.admin import prometheus as p

    assert p._columns_of(b'[[1795785960,"45.88"],[1795786020.5,"1e5"]]') == \
        ([1795785960.0, 1795786020.5], [45.88, 1e5])
    assert p._columns_of(b"[]") == ([], [])
    for raw in (b'[["1,2"]]', b'[[1,"2,3"]]', b'[[1,"[2",3,"]4"]]', b'[[1,"2",3]]', b'[[1]]',
                b'[[1,"2"],[3,"4"],5]', b'[[1, "2"]]', b'[[1,"NaN"]]', b'[[1,"1e400"]]',
                b'[["1",2]]', b'[[1,"2"]', b'[[1,""]]', b'[[1,"-"]]', b'[[1,"01"]]'):
        assert p._columns_of(raw) is None, raw
    body = matrix([({"a": "1"}, [(T0 / 1000, "0.5"), ((T0 + STEP) / 1000, "1e5")])],
                  compact=True)
    answer = p._decode_range(body)
    assert answer is not None and answer.series == [({"a": "1"}, [T0 / 1000, (T0 + STEP) / 1000],
                                                      [0.5, 1e5])]


def test_a_series_on_the_grid_keeps_the_grid_s_times() -> None:
    from lbctl.admin import prometheus as p

    body = matrix([({"a": "1"}, [((T0 + k * STEP) / 1000, f"{k}.5") for k in range(2, 5)])])
    answer = p._decode_range(body)
    assert answer is not None
    (s,) = p._fast_series(answer, T0, T0 + 9 * STEP, STEP) or []
    assert s.times == [T0 + k * STEP for k in range(2, 5)] and s.values == [2.5, 3.5, 4.5]
    assert p._decode_range(matrix([({"a": "1"}, [(T0 / 1000, "-0")])])) is None  # -0.0 kept
    assert p._decode_range(matrix([({"a": "1"}, [(T0 / 1000, "+Inf")])])) is None


# ---- several queries at once ----------------------------------------------------------------------
def test_queries_run_concurrently_bounded_and_in_order() -> None:
    import asyncio

    in_flight = [0, 0]  # now, most

    async def handler(req: httpx.Request) -> httpx.Response:
        in_flight[0] += 1
        in_flight[1] = max(in_flight[1], in_flight[0])
        await asyncio.sleep(0.01)
        in_flight[0] -= 1
        q = parse_qs(req.url.query.decode())
        if req.url.path == "/api/v1/series":
            return httpx.Response(200, json={"status": "success", "data": [
                {"m": q["match[]"][0]}]})
        return httpx.Response(200, content=matrix([({"q": q["query"][0]},
                                                    [(float(q["start"][0]), "1")])]))

    from lbctl.admin.prometheus import RangeQuery

    c = prom("http://prom", transport=httpx.MockTransport(handler), max_concurrency=3)
    res = c.query_ranges([RangeQuery(f"q{i}", T0, T0, STEP) for i in range(10)])
    assert [r.series[0].labels["q"] for r in res] == [f"q{i}" for i in range(10)]
    assert in_flight[1] == 3 and c.requests == 10
    assert c.series_many([[f"m{i}"] for i in range(5)], T0, T0) == [
        [{"m": f"m{i}"}] for i in range(5)]
    with pytest.raises(UsageError, match="would take 11 requests"):
        prom("http://prom", transport=httpx.MockTransport(handler), max_requests=10).query_ranges(
            [RangeQuery(f"q{i}", T0, T0, STEP) for i in range(11)])


def test_the_first_failure_in_order_is_raised_and_the_others_cancelled() -> None:
    import asyncio

    async def handler(req: httpx.Request) -> httpx.Response:
        q = parse_qs(req.url.query.decode())["query"][0]
        if q == "slow":
            await asyncio.sleep(30)
        if q.startswith("bad"):
            await asyncio.sleep(0.01 if q == "bad1" else 0)
            return httpx.Response(400, json={"status": "error", "error": f"parse error in {q}"})
        return httpx.Response(200, content=matrix([]))

    from lbctl.admin.prometheus import RangeQuery

    c = prom("http://prom", transport=httpx.MockTransport(handler))
    with pytest.raises(Exception, match="parse error in bad1"):
        c.query_ranges([RangeQuery(q, T0, T0, STEP) for q in ("ok", "bad1", "bad2", "slow")])


@pytest.mark.parametrize(("url", "encoding"), [
    ("http://127.0.0.1:9090", "identity"), ("http://localhost:9090", "identity"),
    ("http://[::1]:9090", "identity"), ("http://prom.example:9090", "gzip"),
    ("https://10.0.0.7", "gzip")])
def test_answers_are_compressed_but_on_this_machine(url: str, encoding: str) -> None:
    seen: list[str | None] = []

    def handler(req: httpx.Request) -> httpx.Response:
        seen.append(req.headers.get("accept-encoding"))
        return httpx.Response(200, content=matrix([]))

    prom(url, transport=httpx.MockTransport(handler)).query_range("up", T0, T0, STEP)
    assert seen == [encoding]
