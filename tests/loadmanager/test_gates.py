"""Which switch gates what in the modular load manager: ``loadBalancerEnabled`` stops shedding
(``PulsarService`` schedules no ``LoadSheddingTask``; ``LoadManagerShared.isLoadSheddingEnabled``)
but not ``ModularLoadManagerImpl.checkNamespaceBundleSplit``, which ``updateAll`` runs and which
reads only ``loadBalancerAutoBundleSplitEnabled``, leadership and (since 3.0.1, PR #20190) the
number of known brokers."""

from __future__ import annotations

import pytest

from lbctl.explain.modular import NO_SHEDDING_TASK, ModularExplanation
from lbctl.loadmanager.select import Options, run
from tests.factories import MB, broker, state, stats

NOW = 1_763_000_000_000
HOT = "t/hot/0x00000000_0xffffffff"


def two_brokers():  # type: ignore[no-untyped-def]
    """An overloaded broker with a bundle over the split limits, and an idle one."""
    return state({
        "a:8080": broker(cpu=(95, 100), bundles={HOT: stats(40000, 0, 90 * MB, topics=2000),
                                                 "t/x/0x00000000_0xffffffff": stats(10, 0, MB)}),
        "b:8080": broker(cpu=(5, 100), bundles={"t/y/0x00000000_0xffffffff": stats(10, 0, MB)}),
    }, now=NOW)


def one_broker():  # type: ignore[no-untyped-def]
    return state({"a:8080": broker(cpu=(50, 100), bundles={
        HOT: stats(40000, 0, 90 * MB, topics=2000)})}, now=NOW)


def test_load_balancer_disabled_sheds_nothing_but_still_splits() -> None:
    """``checkNamespaceBundleSplit`` does not read ``loadBalancerEnabled``: the cycle splits the
    hot bundle and unloads nothing; the gate says why nothing is shed and not that the load
    manager "does nothing" (it splits)."""
    opts = Options(strategy="OverloadShedder", overrides={"loadBalancerEnabled": "false"})
    (r,) = run([two_brokers()], opts)
    assert [s.candidate.bundle for s in r.splits if s.skipped is None] == [HOT]
    assert r.outcomes == ()
    assert r.gate == NO_SHEDDING_TASK
    assert "does nothing" not in r.gate
    lines = "\n".join(ModularExplanation(r).lines())
    assert "does nothing" not in lines
    assert "LoadReportUpdaterTask" in lines and "updateAll" in lines
    assert ModularExplanation(r).to_dict()["splitTrigger"].startswith("These splits")


def test_the_split_trigger_note_is_only_for_a_disabled_load_balancer() -> None:
    (on,) = run([two_brokers()], Options(strategy="OverloadShedder",
                                          overrides={"loadBalancerSheddingEnabled": "false"}))
    assert [s.candidate.bundle for s in on.splits if s.skipped is None] == [HOT]
    assert "splitTrigger" not in ModularExplanation(on).to_dict()
    assert "LoadReportUpdaterTask" not in "\n".join(ModularExplanation(on).lines())
    (off,) = run([two_brokers()], Options(strategy="OverloadShedder", overrides={
        "loadBalancerEnabled": "false", "loadBalancerAutoBundleSplitEnabled": "false"}))
    assert off.splits == ()
    assert "splitTrigger" not in ModularExplanation(off).to_dict()
    assert f"Nothing happens: {NO_SHEDDING_TASK}." in ModularExplanation(off).lines()


@pytest.mark.parametrize(("version", "splits"), [
    ("2.10.6", True), ("2.11.4", True), ("3.0.0", True),  # before PR #20190
    ("3.0.1", False), ("3.1.0", False), ("4.1.1", False), (None, False),
])
def test_a_single_broker_splits_only_before_3_0_1(version: str | None, splits: bool) -> None:
    """``checkNamespaceBundleSplit`` returns when ``knownBrokers.size() <= 1`` since PR #20190
    (3.0.1, 3.1.0); older releases split the hot bundle of a lone broker, and keep the children
    there (``shouldNamespacePoliciesUnload``: no other broker could take them)."""
    (r,) = run([one_broker()], Options(pulsar_version=version))
    done = [s for s in r.splits if s.skipped is None]
    assert [s.candidate.bundle for s in done] == ([HOT] if splits else [])
    assert not any(s.unload for s in done)


# --- the extensible schedulers ---------------------------------------------------------------------
def _extensible_cycle(**conf: str):  # type: ignore[no-untyped-def]
    """examples/extensible/skewed.json with its hot bundle over the split limit on the first cycle
    (hit-count threshold 0, bandwidth limit 45 MB/s)."""
    from pathlib import Path

    from lbctl.config import resolve
    from lbctl.loadmanager.extensible import ExtensibleLoadManager
    from lbctl.sources.snapshot import read_snapshots

    st = read_snapshots([Path(__file__).resolve().parents[2] / "examples" / "extensible"
                         / "skewed.json"])[0]
    settings = resolve(st.config, {}, {
        "loadBalancerNamespaceBundleSplitConditionHitCountThreshold": "0",
        "loadBalancerNamespaceBundleMaxBandwidthMbytes": "45", **conf})
    return ExtensibleLoadManager(seed=0).run_cycle(st, settings)


def _extensible_splits(r) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.bundle for res in r.splits for d in res.decisions if d.label == "Success"]


def test_extensible_schedulers_disable_load_balancer() -> None:
    """``UnloadSchedulerTest#testDisableLoadBalancer`` (04fc474f2bfa) and
    ``SplitSchedulerTest#testDisableLoadBalancer`` (02c927448609): ``UnloadScheduler`` runs only
    with ``loadBalancerEnabled`` and ``loadBalancerSheddingEnabled``, ``SplitScheduler`` only with
    ``loadBalancerEnabled`` and ``loadBalancerAutoBundleSplitEnabled`` — neither asks its
    strategy otherwise."""
    on = _extensible_cycle()
    assert on.actions and _extensible_splits(on)
    off = _extensible_cycle(loadBalancerEnabled="false")
    assert off.actions == () and _extensible_splits(off) == []
    no_shedding = _extensible_cycle(loadBalancerSheddingEnabled="false")
    assert no_shedding.actions == () and _extensible_splits(no_shedding) == _extensible_splits(on)
    no_split = _extensible_cycle(loadBalancerAutoBundleSplitEnabled="false")
    assert _extensible_splits(no_split) == []
    assert [a.decision.unload for a in no_split.actions] == [a.decision.unload for a in on.actions]
