"""A range answer's series whose times are the query's grid, written as Prometheus writes them
(``[[t,"v"],…]``, whole seconds as integers), are read with no time decoded
(:func:`lbctl.admin.prometheus._on_grid`): the same series, or the same one-line error, as the
sample-by-sample checked reading, on any answer — times on the grid or off it, with gaps, twice,
in another spelling; values odd or hostile."""

from __future__ import annotations

import json
from typing import Any

import httpx  # noqa: TID253  # a mock Prometheus behind the client's transport API
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.admin import prometheus as p
from lbctl.admin.prometheus import PrometheusClient

T0, STEP, N = 1_700_000_040_000, 60_000, 8
GRID = (T0, T0 + (N - 1) * STEP, STEP)


def _seconds(ms: int) -> str:
    whole, frac = divmod(ms, 1000)
    return f"{whole}.{frac:03d}" if frac else str(whole)


#: a sample time's text: a step of the grid as Prometheus writes it (most of them), off the grid,
#: beyond it, or the right time in another spelling
_TIME = st.one_of(
    st.integers(-1, N).map(lambda k: _seconds(T0 + k * STEP)),
    st.integers(-1, N).map(lambda k: _seconds(T0 + k * STEP)),
    st.integers(0, N - 1).map(lambda k: _seconds(T0 + k * STEP + 500)),
    st.integers(0, N - 1).map(lambda k: f"{(T0 + k * STEP) // 1000}.0"),
    st.integers(0, N - 1).map(lambda k: f'"{(T0 + k * STEP) // 1000}"'),
    st.integers(0, N - 1).map(lambda k: f"{(T0 + k * STEP) / 1000:e}"),
    st.sampled_from(["0", "-1", "1e400", "NaN", "null", " 1700000040"]))
#: a sample value's text, quoted as Prometheus writes it or not
_VALUE = st.one_of(
    st.floats(-1e6, 1e6).map(lambda v: f'"{v!r}"'),
    st.integers(0, 10**20).map(lambda v: f'"{v}"'),
    st.sampled_from(['"-0"', '"0"', '"1e5"', '"1E5"', '" 1"', '"2,3"', '"[2"', '"]4"', '""',
                     '"-"', '"01"', '"+1"', '".5"', '"1.2.3"', '"1e400"', '"NaN"', '"+Inf"',
                     '"-Inf"', '"\\u0031"', '"1\\"2"', '"-0.0"', '"1e308"', "1", "[1]",
                     '"1","2"']))


def _series_text(samples: list[tuple[str, str]]) -> str:
    return "[" + ",".join(f"[{t},{v}]" for t, v in samples) + "]"


def _body(series: list[list[tuple[str, str]]]) -> bytes:
    result = ",".join(f'{{"metric":{{"s":"{k}"}},"values":{_series_text(vals)}}}'
                      for k, vals in enumerate(series))
    return f'{{"status":"success","data":{{"resultType":"matrix","result":[{result}]}}}}'.encode()


def _outcome(fn: Any, exact: bool) -> Any:
    """The series (``exact``: their times and values as listed; else as points, a time given
    twice keeping its last value, as the checked reading keeps it), or the error."""
    try:
        return [(s.labels, (s.times, s.values) if exact else s.points) for s in fn()]
    except Exception as e:  # the same error, word for word
        return (type(e), str(e))


def _typed(body: bytes, grid: bool) -> list[p.Series]:
    """What the client makes of the answer: typed (``grid``: told the query's grid), else
    checked."""
    answer = p._decode_range(body, GRID if grid else None)
    if answer is not None:
        fast = p._fast_series(answer, *GRID)
        if fast is not None:
            return fast
    return _checked(body)


def _checked(body: bytes) -> list[p.Series]:
    with PrometheusClient("http://prom") as c:
        return c._series_checked(json.loads(body)["data"])


def _run(first: int, n: int) -> list[tuple[str, str]]:
    return [(_seconds(T0 + k * STEP), f'"{k}.25"') for k in range(first, first + n)]


def _changed(run: list[tuple[str, str]], k: int, t: str | None, v: str | None
             ) -> list[tuple[str, str]]:
    """``run`` with its ``k``-th sample's time and/or value replaced."""
    return [(t or s[0], v or s[1]) if i == k else s for i, s in enumerate(run)]


@settings(max_examples=500, derandomize=True, deadline=None)
@given(series=st.lists(st.one_of(
    st.lists(st.tuples(_TIME, _VALUE), max_size=N + 2),
    # a run of the grid as Prometheus writes it, one sample's time and/or value changed
    st.builds(_changed, st.tuples(st.integers(0, N - 1), st.integers(1, N)).map(
        lambda a: _run(a[0], min(a[1], N - a[0]))), st.integers(0, N - 1),
        st.none() | _TIME, st.none() | _VALUE)), max_size=3))
def test_a_series_read_on_the_grid_is_what_the_checked_reading_makes(
        series: list[list[tuple[str, str]]]) -> None:
    """The same series as the decoding with times, sample for sample, and as the checked
    reading (a time given twice: its last value)."""
    body = _body(series)
    try:
        json.loads(body)
    except ValueError:
        return  # not JSON: neither reading gets as far as a series
    on_grid = _outcome(lambda: _typed(body, grid=True), exact=True)
    assert on_grid == _outcome(lambda: _typed(body, grid=False), exact=True)
    assert _outcome(lambda: _typed(body, grid=True), exact=False) == \
        _outcome(lambda: _checked(body), exact=False)


@pytest.mark.parametrize("raw", [
    b'[[1700000040,"1"],[1700000100,"2,3"]]',  # a value holding a comma
    b'[[1700000040,"1"],[1700000100," 2"]]',  # a space
    b'[[1700000040,"1"],[1700000100,"2"],[]]',  # a third item
    b'[[1700000040,"1"],[1700000100,"2","3"]]',
    b'[[1700000040,"1"],[1700000100,"NaN"]]',
    b'[[1700000040,"1"],[1700000100,""]]',
    b'[[1700000040,"1"],[1700000100,"1e400"]]',
    b'[[1700000040,"1"],[1700000100,"\\u0031"]]',
    b'[[1700000040,"1"],[1700000220,"2"]]',  # a step left out
    b'[[1700000040,"1"],[1700000040,"2"]]',  # a time twice
    b'[[1700000040,"1"],[1700000100.000,"2"]]',  # the right time, spelt otherwise
    b'[[1700000040,"1"],[1700000100,2]]',  # a value not in quotes
    b'[[1700000520,"1"],[1700000580,"2"]]',  # beyond the grid
    b'[]'])
def test_a_series_not_exactly_on_the_grid_is_decoded_with_its_times(raw: bytes) -> None:
    """Anything but ``[[t,"v"],…]`` with the grid's times, consecutive, and JSON numbers for
    values is left to the decoding with times, whose reading then stands (as the checked
    reading's, property test above)."""
    assert p._on_grid(raw, p._grid_text(*GRID)) is None
    body = b'{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},' \
        b'"values":' + raw + b"}]}}"
    assert _outcome(lambda: _typed(body, grid=True), exact=True) == \
        _outcome(lambda: _typed(body, grid=False), exact=True)


@pytest.mark.parametrize(("first", "n"), [(0, N), (0, 3), (2, 4), (N - 1, 1)])
def test_a_run_of_the_grid_is_read_with_no_time_decoded(first: int, n: int) -> None:
    """Written as Prometheus writes it, a series on consecutive steps of the grid takes the
    grid's own times: the decoding with times (``_columns_of``) is never called for it."""
    body = _body([_run(first, n), _run(0, N)])
    answer = p._decode_range(body, GRID)
    assert answer is not None and answer.on_grid == {0, 1}
    (a, b) = p._fast_series(answer, *GRID) or []
    assert a.times == [T0 + k * STEP for k in range(first, first + n)]
    assert a.values == [k + 0.25 for k in range(first, first + n)]
    assert b.times == list(range(T0, T0 + N * STEP, STEP))


def test_the_client_reads_prometheus_answers_without_decoding_their_times(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the client (chunked: each chunk's grid), no series of an answer written as
    Prometheus writes it has its times decoded, and the result is the series asked for."""
    def no_times(raw: bytes) -> None:
        raise AssertionError(f"times decoded: {raw[:40]!r}")

    monkeypatch.setattr(p, "_columns_of", no_times)

    def handler(req: httpx.Request) -> httpx.Response:
        q = dict(req.url.params)
        start, end = (round(float(q[k]) * 1000) for k in ("start", "end"))
        k0, k1 = (start - T0) // STEP, (end - T0) // STEP
        return httpx.Response(200, content=_body([_run(k0, k1 - k0 + 1)]))

    with PrometheusClient("http://prom", transport=httpx.MockTransport(handler),
                          max_points=3) as c:
        (s,) = c.query_range("up", *GRID).series
    assert s.times == list(range(T0, T0 + N * STEP, STEP))
    assert s.values == [k + 0.25 for k in range(N)]


def test_a_grid_before_1970_is_not_read_as_text() -> None:
    """Prometheus writes -1.5 s as ``-1.500`` where :func:`_seconds` would write ``-2.500``: a
    grid before 1970 is decoded with its times, whatever its text."""
    grid = (-1500, 58_500, 60_000)
    body = _body([[("-2.500", '"1"'), ("58.500", '"2"')]])
    answer = p._decode_range(body, grid)
    assert answer is not None and answer.on_grid == set()

