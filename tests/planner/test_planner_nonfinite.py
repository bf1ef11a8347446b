"""A broker whose usage is not a number (a report beyond float range: Pulsar's
``ResourceUsage.percentUsage()`` computes in float, so 1e308 of 800 is +Infinity): the planner
passed over the NaN term and said "the goals are already met" beside brokers at +inf, on their
bandwidth alone. It refuses, naming the broker and the resource."""

from __future__ import annotations

import pytest

from lbctl.config import Settings
from lbctl.errors import LbctlError
from lbctl.planner.propose import ProposeOptions, propose
from tests.factories import broker, state, stats


def _cluster(cpu0: float, now: int = 0):  # type: ignore[no-untyped-def]
    return state({f"b{j}:8080": broker(
        cpu=(cpu0 if j == 0 else 300.0, 800.0), bandwidth_in=(1000.0, 1e7),
        bandwidth_out=(1000.0, 1e7),
        bundles={f"t/ns{j}/0x{k:08x}_0x{k + 1:08x}": stats(100, 100, 1e5, 1e5)
                 for k in range(3)}) for j in range(4)}, now=now)


def test_a_report_beyond_float_range_is_refused() -> None:
    with pytest.raises(LbctlError, match=r"broker b0:8080: its cpu usage is not a finite "
                                         r"percentage \(it reports 1e\+308 of 800: inf %"):
        propose(_cluster(1e308), Settings.defaults(), ProposeOptions(solver="greedy"))


def test_a_history_spoilt_by_such_a_report_is_refused() -> None:
    first, last = _cluster(1e308, now=0), _cluster(700.0, now=60_000)
    with pytest.raises(LbctlError, match="the load model learnt from the history gives its cpu"):
        propose(last, Settings.defaults(), ProposeOptions(solver="greedy"), history=[first, last])


def test_a_large_but_finite_report_is_planned() -> None:
    plan = propose(_cluster(1600.0), Settings.defaults(), ProposeOptions(solver="greedy"))
    assert plan is not None
