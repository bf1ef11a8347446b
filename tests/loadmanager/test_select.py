"""``lbctl.loadmanager.select.choose``: the one place that decides which load manager serves a
request — for recommend/explain, for the simulator, and with lbctl's own planner offered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lbctl import versions
from lbctl.config import resolve
from lbctl.errors import UsageError
from lbctl.loadmanager.base import LoadManager
from lbctl.loadmanager.extensible import ExtensibleLoadManager
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.loadmanager.select import (
    DEFAULT_PLACEMENT,
    Options,
    Own,
    choose,
    kind_of,
    manager,
    pair_options,
    strategy_pair,
)
from lbctl.model.cluster import ClusterState
from lbctl.planner.cycle import PlannerLoadManager, offer
from lbctl.sources.snapshot import read_snapshots

ROOT = Path(__file__).resolve().parents[2]
MODULAR = read_snapshots([ROOT / "examples" / "hot-broker.json"])
EXTENSIBLE = read_snapshots([ROOT / "examples" / "extensible" / "skewed.json"])


def _choose(states: list[ClusterState], opts: Options, **kw: Any) -> LoadManager[Any]:
    return choose(states, opts, resolve(states[-1].config), **kw)


def test_a_modular_snapshot_runs_the_modular_load_manager_with_the_flags_strategies() -> None:
    lm = _choose(MODULAR, Options(strategy="OverloadShedder", placement="RoundRobinBrokerSelector"))
    assert isinstance(lm, ModularLoadManager) and lm.check_splits
    assert lm.strategies == ("OverloadShedder", "RoundRobinBrokerSelector")


def test_transfer_shedder_reads_a_modular_snapshot_as_extensible_except_in_the_simulator() -> None:
    opts = Options(strategy="TransferShedder")
    assert isinstance(_choose(MODULAR, opts), ExtensibleLoadManager)
    simulated = _choose(MODULAR, opts, simulating=True)
    # checkNamespaceBundleSplit included: the simulator carries its splits out (issue 29)
    assert isinstance(simulated, ModularLoadManager) and simulated.check_splits
    assert simulated.strategies[0] == "TransferShedder"


def test_an_extensible_snapshot_runs_the_extensible_load_manager() -> None:
    assert isinstance(_choose(EXTENSIBLE, Options()), ExtensibleLoadManager)
    with pytest.raises(UsageError, match="sheds with TransferShedder only"):
        _choose(EXTENSIBLE, Options(strategy="ThresholdShedder"))
    with pytest.raises(UsageError, match="places with LeastResourceUsageWithWeight only"):
        _choose(EXTENSIBLE, Options(placement="LeastLongTermMessageRate"), simulating=True)


def test_the_release_is_checked_except_by_the_simulator() -> None:
    opts = Options(pulsar_version="2.11")
    with pytest.raises(UsageError, match="has no extensible load manager"):
        manager(EXTENSIBLE, opts)
    lm, settings = manager(EXTENSIBLE, Options())
    assert isinstance(lm, ExtensibleLoadManager) and len(settings) == 1
    old = resolve(EXTENSIBLE[-1].config, profile=versions.resolve("2.11"))
    assert isinstance(choose(EXTENSIBLE, opts, old, simulating=True), ExtensibleLoadManager)


def test_a_mix_is_refused_and_no_snapshot_is_an_error() -> None:
    with pytest.raises(UsageError, match="mix modular and extensible"):
        kind_of([*MODULAR, *EXTENSIBLE])
    assert kind_of([]) is None
    with pytest.raises(UsageError, match="no snapshot given"):
        manager([], Options())


def test_the_planner_is_chosen_only_where_it_is_offered() -> None:
    own = offer()
    lm = _choose(EXTENSIBLE, Options(strategy=" LBCTL "), own=own)
    assert isinstance(lm, PlannerLoadManager) and lm.label == "lbctl"
    with pytest.raises(UsageError, match="unknown shedding strategy 'lbctl'"):
        _choose(MODULAR, Options(strategy="lbctl"))
    with pytest.raises(UsageError, match="lbctl's planner chooses destinations itself: "
                                         "--placement does not apply to --strategy lbctl"):
        _choose(MODULAR, Options(strategy="lbctl", placement="LeastLongTermMessageRate"), own=own)


def test_an_own_load_manager_is_built_by_what_offers_it() -> None:
    built: list[LoadManager[Any]] = []

    def build() -> LoadManager[Any]:
        built.append(ExtensibleLoadManager(seed=7))
        return built[-1]

    own = Own("mine", "my load manager", build)
    assert _choose(MODULAR, Options(strategy="Mine"), own=own) is built[0]
    assert isinstance(_choose(MODULAR, Options(), own=own), ModularLoadManager)


def test_compare_pairs() -> None:
    own = offer()
    assert strategy_pair("ThresholdShedder") == ("ThresholdShedder", None)
    assert strategy_pair("org.apache.pulsar.broker.loadbalance.impl.AvgShedder:AvgShedder") == (
        "AvgShedder", "AvgShedder")
    assert strategy_pair("OverloadShedder", "RoundRobinBrokerSelector") == (
        "OverloadShedder", "RoundRobinBrokerSelector")
    assert strategy_pair("lbctl", "RoundRobinBrokerSelector", own) == ("lbctl", None)
    with pytest.raises(UsageError, match="'lbctl:AvgShedder' names a placement"):
        strategy_pair("lbctl:AvgShedder", None, own)
    with pytest.raises(UsageError, match="expects NAME or NAME:PLACEMENT"):
        strategy_pair("ThresholdShedder:")


def test_compare_pair_options() -> None:
    own = offer()
    opts = Options(placement="RoundRobinBrokerSelector", seed=3)
    assert pair_options(opts, "lbctl", None, "AvgShedder", own).placement is None
    assert pair_options(opts, "ThresholdShedder", None, "AvgShedder", own).placement == \
        "RoundRobinBrokerSelector"
    bare = Options()
    assert pair_options(bare, "ThresholdShedder", None, "AvgShedder").placement == \
        DEFAULT_PLACEMENT == "LeastLongTermMessageRate"
    assert pair_options(bare, "AvgShedder", None, "AvgShedder").placement is None
    assert pair_options(bare, "ThresholdShedder", "RoundRobinBrokerSelector",
                        "AvgShedder").placement == "RoundRobinBrokerSelector"
