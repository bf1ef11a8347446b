"""Drain and fill plans (lbctl.loadmanager.drain): placement by the cluster's own strategy with
preallocation, system namespaces left alone, plan@1 valid; the fill plan's rules."""

from __future__ import annotations

from collections import Counter

import pytest

from lbctl.config import resolve
from lbctl.errors import UsageError
from lbctl.loadmanager.drain import drain_plan, fill_plan, movable_bundles, usage_of
from lbctl.loadmanager.select import Options
from lbctl.sources.snapshot import read_snapshots
from tests.factories import MB, _bundles, _scenario, skewed_underload, with_system_namespaces
from tests.paths import EXAMPLES
from tests.plan_contract import check_plan


def _settings(state, **over):  # type: ignore[no-untyped-def]
    return resolve(state.config, {}, {k: str(v) for k, v in over.items()})


def test_every_movable_bundle_once_never_to_the_drained_broker() -> None:
    st = with_system_namespaces()
    plan = drain_plan(st, _settings(st), "b0:8080", Options())
    check_plan(plan.to_dict())
    moved = [a.bundle for a in plan.actions]
    assert sorted(moved) == sorted(b for b in st.brokers["b0:8080"].lastStats
                                   if b.startswith("t/"))  # heartbeat and SLA-monitor stay
    assert all(a.destinationBroker in ("b1:8080", "b2:8080") for a in plan.actions)
    assert all(a.reason == "Admin" and a.skipped is None for a in plan.actions)
    assert plan.shedding == "drain" and plan.placement == "LeastLongTermMessageRate"


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_preallocation_spreads_over_equal_brokers(seed: int) -> None:
    """Two idle brokers and four equal bundles: ModularLoadManagerImpl.selectBroker preallocates
    each choice, so LeastLongTermMessageRate's next score counts it and the four alternate
    (without preallocation every pick would be a coin toss among equals)."""
    per = {"b0:8080": _bundles("t/ns", 4, 10 * MB, 1000)}
    st = _scenario({"b0:8080": 0.5, "b1:8080": 0.1, "b2:8080": 0.1}, per)
    plan = drain_plan(st, _settings(st), "b0:8080", Options(seed=seed))
    assert Counter(a.destinationBroker for a in plan.actions) == {"b1:8080": 2, "b2:8080": 2}


def test_overloaded_broker_is_not_a_destination() -> None:
    st = read_snapshots([EXAMPLES / "hot-broker.json"])[-1]
    settings = _settings(st)
    usage = usage_of(st, settings)
    thr = settings["loadBalancerBrokerOverloadedThresholdPercentage"] / 100
    hot = {b for b, u in usage.items() if u > thr}
    assert hot
    cool = next(b for b in st.brokers if b not in hot)
    plan = drain_plan(st, settings, cool, Options())
    check_plan(plan.to_dict())
    assert plan.actions and not {a.destinationBroker for a in plan.actions} & hot


def test_round_robin_placement_and_unknown_broker() -> None:
    st = with_system_namespaces()
    plan = drain_plan(st, _settings(st), "b0:8080", Options(placement="RoundRobinBrokerSelector"))
    assert plan.placement == "RoundRobinBrokerSelector"
    assert len({a.destinationBroker for a in plan.actions}) == 2
    with pytest.raises(UsageError, match="not an active broker"):
        drain_plan(st, _settings(st), "nope:1", Options())


def test_single_broker_cannot_be_drained() -> None:
    st = _scenario({"b0:8080": 0.5}, {"b0:8080": _bundles("t/ns", 2, MB, 10)})
    plan = drain_plan(st, _settings(st), "b0:8080", Options())
    assert all(a.skipped for a in plan.actions) and len(plan.actions) == 2
    check_plan(plan.to_dict())


def test_extensible_drain_uses_its_filters_and_placement() -> None:
    st = read_snapshots([EXAMPLES / "extensible" / "skewed.json"])[-1]
    settings = _settings(st)
    src = next(b for b in st.brokers if movable_bundles(st, b))
    plan = drain_plan(st, settings, src, Options())
    check_plan(plan.to_dict())
    assert plan.placement == "LeastResourceUsageWithWeight"
    assert plan.actions and all(a.destinationBroker not in (None, src) for a in plan.actions)


def test_fill_raises_the_restarted_broker_toward_the_mean() -> None:
    st = skewed_underload()  # three brokers at 60 %, a restarted one at 1 % with nothing
    settings = _settings(st)
    plan = fill_plan(st, settings, "b3:8080", Options())
    check_plan(plan.to_dict())
    assert plan.actions
    assert all(a.destinationBroker == "b3:8080" and a.reason == "Underloaded"
               for a in plan.actions)
    rows = {r.broker: r for r in plan.brokers}
    mean = sum(r.usage for r in rows.values()) / len(rows)
    assert rows["b3:8080"].usage_after <= mean + 1e-9
    # every move narrowed the gap between its source and the target
    assert all(rows[a.broker].usage_after >= rows["b3:8080"].usage_after - 0.05
               for a in plan.actions)
    assert plan.summary()["after"]["std"] < plan.summary()["before"]["std"]
    # the sources take turns: no broker gives more than one bundle before the others give one
    sources = [a.broker for a in plan.actions]
    assert max(Counter(sources).values()) - min(Counter(sources).values()) <= 1
    capped = fill_plan(st, settings, "b3:8080", Options(), max_moves=1)
    assert len(capped.actions) == 1


def test_fill_nothing_when_at_or_above_the_mean() -> None:
    st = skewed_underload()
    plan = fill_plan(st, _settings(st), "b0:8080", Options())
    assert not plan.actions and plan.gate and "at or above the average" in plan.gate


def test_fill_respects_max_topics() -> None:
    st = skewed_underload()
    plan = fill_plan(st, _settings(st, loadBalancerBrokerMaxTopics=4), "b3:8080", Options())
    assert len(plan.actions) == 1  # each bundle has 3 topics: a second would make 6 > 4


def test_fill_leaves_bundles_in_the_grace_period() -> None:
    """A bundle unloaded within loadBalancerSheddingGracePeriodMinutes (the journal's unloads, or
    the snapshot's recentlyUnloaded) is one apply refuses to move: the fill plan must not list
    it (after a drain, the drained bundles were all in it and the fill was applied in part)."""
    from lbctl.records import replace

    st = skewed_underload()
    settings = _settings(st)
    first = fill_plan(st, settings, "b3:8080", Options())
    assert first.actions
    now = st.captured_at / 1000
    recent = {a.bundle: now - 60 for a in first.actions}  # unloaded a minute ago
    held = fill_plan(st, settings, "b3:8080", Options(), recent=recent, now=now)
    assert not {a.bundle for a in held.actions} & set(recent)
    assert held.actions  # other bundles fill it instead
    check_plan(held.to_dict())
    old = dict.fromkeys(recent, now - 31 * 60)  # past the 30-minute grace period: movable again
    assert fill_plan(st, settings, "b3:8080", Options(), recent=old, now=now).actions == first.actions
    leader = replace(st, recently_unloaded={a.bundle: st.captured_at - 60_000
                                             for a in first.actions})
    by_leader = fill_plan(leader, settings, "b3:8080", Options())
    assert not {a.bundle for a in by_leader.actions} & set(recent)


@pytest.mark.parametrize("command", [["rebalance-after", "broker-6.pulsar.svc:8080"],
                                     ["drain", "broker-1.pulsar.svc:8080"]])
def test_a_preview_models_the_snapshots_release(command: list[str]) -> None:
    """drain.md's offline previews: the settings are the release the snapshot's brokers report
    (4.0.4 here), as recommend and propose model it; they were the newest release's defaults
    ("Modelled as Pulsar 4.1.1 (newest)") for the same file."""
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    res = CliRunner().invoke(app, [*command, "--snapshot", str(EXAMPLES / "rolling-restart.yaml")],
                             env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.stderr
    assert "Modelled as Pulsar 4.0.4 (snapshot)" in res.stdout


@pytest.mark.parametrize("command", [["rebalance-after", "broker-6.pulsar.svc:8080"],
                                     ["drain", "broker-6.pulsar.svc:8080", "--fill"]])
def test_a_fill_plan_is_headed_by_its_rule(command: list[str]) -> None:
    """drain.md's rebalance-after preview was headed 'prod-apac at …: fill + fill' (the rule
    chooses both the bundles and their destination)."""
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    res = CliRunner().invoke(app, [*command, "--snapshot", str(EXAMPLES / "rolling-restart.yaml")],
                             env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[0] == "prod-apac at 2026-03-13T02:17:00Z: lbctl's fill rule"


def test_an_unknown_broker_far_from_any_names_the_active_ones() -> None:
    """`lbctl drain broker-3:8080` (drain.md) on the sandbox matches no name closely: the error
    listed nothing to type instead."""
    st = with_system_namespaces()
    with pytest.raises(UsageError, match=r"its active brokers: b0:8080, b1:8080, b2:8080$"):
        drain_plan(st, _settings(st), "broker-3.pulsar.svc:8443", Options())
    with pytest.raises(UsageError, match=r"did you mean b1:8080\?"):
        fill_plan(st, _settings(st), "b1:8081", Options())
