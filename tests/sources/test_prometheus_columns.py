"""A chunk's samples as columns (``lbctl.sources.prometheus.history``): a series' samples placed
by their step on the chunk's grid, read back at each step as the per-sample reading did (a time
off the grid ignored, a time answered twice keeping its last value, the first series of a
broker, bundle and field winning where two have a sample)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.sources.prometheus.history import BUNDLE_FIELDS, BundleColumns, Grid

T0, STEP = 1_700_000_000_000, 60_000
GRID = Grid(T0, STEP, 5)


def at(*ks: int) -> list[int]:
    return [T0 + k * STEP for k in ks]


def test_a_series_on_every_step_is_its_column() -> None:
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert GRID.column(at(0, 1, 2, 3, 4), values) is values
    assert GRID.times == at(0, 1, 2, 3, 4)


def test_a_run_of_steps_is_padded() -> None:
    assert GRID.column(at(1, 2), [7.0, 8.0]) == [None, 7.0, 8.0, None, None]
    assert GRID.column(at(3, 4), [7.0, 8.0]) == [None, None, None, 7.0, 8.0]
    assert GRID.column([], []) == [None] * 5


def test_holes_off_grid_times_and_repeats_are_placed_one_by_one() -> None:
    assert GRID.column(at(0, 2, 4), [1.0, 2.0, 3.0]) == [1.0, None, 2.0, None, 3.0]
    off = [T0 + 30_000, T0 + STEP, T0 + 9 * STEP, T0 - STEP]  # between steps, past, before
    assert GRID.column(off, [1.0, 2.0, 3.0, 4.0]) == [None, 2.0, None, None, None]
    assert GRID.column(at(1, 1), [1.0, 2.0]) == [None, 2.0, None, None, None]  # the last one


def test_bundle_columns_read_as_the_stats_of_each_step() -> None:
    cols = BundleColumns(5)
    name = "t/ns/0x00000000_0x80000000"
    cols.add("b1", name, "msgRateIn", GRID.column(at(0, 1), [1.5, 2.5]))
    cols.add("b1", name, "msgRateIn", GRID.column(at(1, 2), [9.0, 3.5]))  # fills step 2 only
    cols.add("b1", name, "topics", GRID.column(at(0, 1, 3), [2.4, -1.0, 2.6]))
    cols.add("b2", name, "msgRateOut", GRID.column(at(1), [4.0]))  # moving: on b2 too at step 1
    cols.seal()
    ((got, carriers),) = cols.entries
    assert got == name and [b for b, _, _ in carriers] == ["b1", "b2"]
    _, present, columns = carriers[0]
    assert present == [True, True, True, True, False]
    by_field = dict(zip(BUNDLE_FIELDS, columns, strict=True))
    assert by_field["msgRateIn"] == [1.5, 2.5, 3.5, 0.0, 0.0]
    assert by_field["topics"] == [2, 0, 0, 3, 0]  # rounded; negative or missing: 0
    assert by_field["consumerCount"] == [0] * 5
    assert [cols.at(i) for i in range(5)] == [
        {name: ["b1"]}, {name: ["b1", "b2"]}, {name: ["b1"]}, {name: ["b1"]}, {}]


# ---- the usage written for an exported percentage -------------------------------------------------
def usage_as_before(percent: float, limit: float = 100.0) -> dict[str, float]:
    """The search as it was written before, through ``ResourceUsage.percent`` (against the
    limit, then against 100 as ``live_extensible`` searched): the reference of the faster one.
    (Past -0.0's bits, ``bits + step`` leaves the int32 range: there is no such neighbour, the
    candidate is skipped — against 100 it was a ``struct.error`` traceback.)"""
    import math
    import struct

    from lbctl.model.load import ResourceUsage, f32

    target = f32(percent)
    if limit != 100.0:
        base = f32(target / 100.0 * f32(limit))
        bits = struct.unpack("<i", struct.pack("<f", base))[0]
        for step in (0, 1, -1, 2, -2, 3, -3, 4, -4):
            if not -(2**31) <= bits + step < 2**31:
                continue
            u = struct.unpack("<f", struct.pack("<i", bits + step))[0] if step else base
            if math.isfinite(u) and ResourceUsage(u, limit).percent == target:
                return {"usage": u, "limit": limit}
    bits = struct.unpack("<i", struct.pack("<f", target))[0]
    for step in (0, 1, -1, 2, -2, 3, -3, 4, -4):
        u = struct.unpack("<f", struct.pack("<i", bits + step))[0] if step else target
        if math.isfinite(u) and ResourceUsage(u, 100.0).percent == target:
            return {"usage": u, "limit": 100.0}
    return {"usage": target, "limit": 100.0}


_PERCENTS = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                      st.floats(0, 100), st.sampled_from([0.0, -0.0, 100.0, 1e-45, 3.4e38, 1e39]))
_LIMITS = st.one_of(st.just(100.0), st.floats(1e-50, 1e12), st.sampled_from(
    [4096.0, 2048.0, 1e-300, 0.5, 3.4e38, 1e39]))


@settings(max_examples=3000, derandomize=True, deadline=None)
@given(percent=_PERCENTS, limit=_LIMITS)
def test_the_usage_is_the_one_the_search_always_found(percent: float, limit: float) -> None:
    """Bit for bit (NaN included) the usage and limit the previous search wrote (-0 % against
    a limit that rounds to a float 0, whose search walked off the int32 bits, included); where
    the search against 100 (``live_extensible``'s) still walks off them, a value."""
    import struct

    from lbctl.sources.percent_usage import usage_for

    def outcome(fn: object) -> object:
        try:
            got = fn(percent, limit)  # type: ignore[operator]
        except struct.error as e:
            return str(e)
        return {k: struct.pack("<d", v) for k, v in got.items()}

    before, now = outcome(usage_as_before), outcome(usage_for)
    if isinstance(before, str):  # the search against 100 walked off the int32 bits
        assert isinstance(now, dict) and percent <= 0  # around -0.0: a value, not a traceback
    else:
        assert now == before


@settings(max_examples=500, derandomize=True, deadline=None)
@given(st.lists(st.tuples(_PERCENTS.filter(math.isfinite), _LIMITS), min_size=1, max_size=12))
def test_a_column_of_usages_is_the_usages_one_by_one(steps: list[tuple[float, float]]) -> None:
    """:func:`usage_columns` (the first candidates checked a column at a time) gives each step's
    :func:`usage_for`, bit for bit. The limits are finite and > 0, as ``_limit`` makes them."""
    import struct

    from lbctl.sources.prometheus.history import usage_columns, usage_for

    def bits(got: list[dict[str, float]]) -> list[dict[str, bytes]]:
        return [{k: struct.pack("<d", v) for k, v in u.items()} for u in got]

    percents, limits = [p for p, _ in steps], [lim for _, lim in steps]
    assert bits(usage_columns(percents, limits)) == bits(list(map(usage_for, percents, limits)))


@settings(max_examples=500, derandomize=True, deadline=None)
@given(st.lists(_PERCENTS.filter(math.isfinite), min_size=1, max_size=12), _LIMITS)
def test_a_column_of_usages_against_one_limit_is_the_usages_one_by_one(
        percents: list[float], limit: float) -> None:
    """The same with one limit along the whole column (CPU and bandwidth: 100; a broker's heap
    or direct memory that did not change), which :func:`usage_columns` computes against that
    one limit: each step's :func:`usage_for`, bit for bit."""
    import struct

    from lbctl.sources.prometheus.history import usage_columns, usage_for

    def bits(got: list[dict[str, float]]) -> list[dict[str, bytes]]:
        return [{k: struct.pack("<d", v) for k, v in u.items()} for u in got]

    limits = [limit] * len(percents)
    assert bits(usage_columns(percents, limits)) == bits(list(map(usage_for, percents, limits)))
