"""lbctl's planner in a closed loop (issue 29 item 5): it does not act on a plan it cannot tell
from noise, and the bundles it moved stay put unless their broker is above the cap."""

from __future__ import annotations

import math
from types import MappingProxyType

import pytest

from lbctl.config import resolve
from lbctl.model.cluster import ClusterState
from lbctl.model.cycle import CycleMemory
from lbctl.model.loadmodel import EARLY_CHANGE_ERROR, LoadModel
from lbctl.planner.assignment import Assignment
from lbctl.planner.cycle import (
    GAIN_ERRORS,
    PlannerLoadManager,
    PlannerMemory,
    _noise,
    _trend,
    _wider_than_band,
    _with_splits,
)
from lbctl.planner.load import percents_now, with_moves
from lbctl.planner.propose import ProposeOptions, propose
from lbctl.records import replace
from tests.planner_clusters import AT_MS, broker, bundle_names, snapshot, stats

GREEDY = ProposeOptions(solver="greedy")
# stats(rate) at 4 KiB messages is rate * 0.0098125 points of CPU on a broker of cost 1
HOT, CRUMB, PIECE = 5605.0, 102.0, 408.0  # ~55, ~1 and ~4 points


def _one_hot_bundle(config: dict[str, object] | None = None, topics: int = 1) -> ClusterState:
    """Broker a at ~59 % with one hot bundle (~55 points, one topic unless ``topics``: a split
    cannot divide it) and a crumb (~1 point); b and c at ~43 % with ten bundles of ~4 points: a
    range of 16 points, and the only move that narrows it is the crumb's (one point)."""
    hot, crumb = bundle_names("tenant/hot", 2)
    small = bundle_names("tenant/small", 20)
    docs = {"broker-a:8080": broker({hot: stats(HOT, topics=topics), crumb: stats(CRUMB)}),
            "broker-b:8080": broker({x: stats(PIECE) for x in small[:10]}),
            "broker-c:8080": broker({x: stats(PIECE) for x in small[10:]})}
    return snapshot(docs, config=config)


def test_a_plan_whose_gain_is_within_the_models_error_is_not_carried_out() -> None:
    state = _one_hot_bundle()
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, resolve(state.config))
    # the crumb's move narrows the range by about a point: within the error of a model
    # calibrated on one snapshot, so the planner does not move it (and does not try again until
    # the loads change)
    assert not cycle.acted
    assert cycle.gate is not None and "within the load model's error" in cycle.gate
    pm = cycle.memory.shedding
    assert isinstance(pm, PlannerMemory) and pm.hopeless and not pm.pending


def test_a_broker_above_the_cap_is_relieved_even_by_a_small_gain() -> None:
    # the same cluster with the cap at 55 %: broker a is overloaded, and any relief counts
    state = _one_hot_bundle({"loadBalancerBrokerOverloadedThresholdPercentage": 55})
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, resolve(state.config))
    assert cycle.acted and cycle.gate is None
    assert {o.selection.broker for o in cycle.unloads} == {"broker-a:8080"}


def test_cooled_down_bundles_move_again_only_off_a_broker_above_the_cap() -> None:
    # every bundle was moved by the planner ten minutes ago; broker a is at ~91 % (above the
    # default 85 % cap), b and c far below: the plan relieves a with a's bundles, and leaves
    # the cooled-down bundles of b and c where they are
    names = bundle_names("tenant/ns", 30)
    docs = {"broker-a:8080": broker({x: stats(900.0) for x in names[:10]}),
            "broker-b:8080": broker({x: stats(PIECE) for x in names[10:20]}),
            "broker-c:8080": broker({x: stats(PIECE / 2) for x in names[20:]})}
    state = snapshot(docs)
    settings = resolve(state.config)
    recent = MappingProxyType(dict.fromkeys(names, AT_MS - 10 * 60_000))
    mem = CycleMemory(shedding=PlannerMemory(recently_moved=recent))
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, settings, mem)
    assert cycle.acted
    assert {o.selection.broker for o in cycle.unloads} == {"broker-a:8080"}


def _at(minute: int, loads: dict[str, dict[str, float]],
        off: dict[str, float] | None = None, cores: dict[str, int] | None = None) -> ClusterState:
    """The cluster at ``minute``: each broker's bundles at their rates, every report written
    then (its CPU ``off`` by so many points: report noise; 8 cores unless ``cores`` says)."""
    docs = {}
    for b, bundles in loads.items():
        doc = broker({x: stats(r) for x, r in bundles.items()}, cores=(cores or {}).get(b, 8))
        doc["lastUpdate"] = AT_MS + minute * 60_000
        doc["cpu"]["usage"] += (off or {}).get(b, 0.0) * doc["cpu"]["limit"] / 100
        docs[b] = doc
    return replace(snapshot(docs), captured_at=AT_MS + minute * 60_000)


def test_a_broker_back_from_a_restart_is_planned_from_its_new_report_not_its_old_history() -> None:
    # a, b and c report ten minutes of varied traffic (their fits are learnt); d, a host of
    # another class (16 cores: no learnt cost to lean on), joined three minutes before it
    # restarted, carrying traffic (three reports: thin), and is back empty
    names = bundle_names("tenant/ns", 24)
    own = {"broker-a:8080": names[:8], "broker-b:8080": names[8:16], "broker-c:8080": names[16:]}
    d = "broker-d:8080"
    history = []
    for m in range(10):
        wave = 1.0 + 0.25 * ((m % 4) - 1.5) / 1.5
        loads = {b: dict.fromkeys(xs, PIECE * wave) for b, xs in own.items()}
        if m >= 7:
            loads[d] = dict.fromkeys(bundle_names("tenant/gone", 4), PIECE * wave)
        history.append(_at(m, loads, cores={d: 16}))
    model = LoadModel.learn(history)
    assert d in model.thin()  # what the old reports made of d
    back = _at(12, {**{b: dict.fromkeys(xs, PIECE) for b, xs in own.items()}, d: {}},
               cores={d: 16})
    settings = resolve(back.config)
    mem = CycleMemory(shedding=PlannerMemory(model=model, brokers=tuple(own)))
    cycle = PlannerLoadManager(GREEDY).run_cycle(back, settings, mem)
    # the leader forgot d when it left: calibrated on its empty report d takes no history's
    # verdict, and the plan fills it
    assert cycle.acted, cycle.gate
    assert {o.destination for o in cycle.unloads} == {d}
    pm = cycle.memory.shedding
    assert isinstance(pm, PlannerMemory) and pm.brokers == (*own, d)
    assert d not in model.thin()


def test_the_goals_met_again_move_the_fewest_cooled_down_bundles_again() -> None:
    # a at ~39 % holds seven bundles the planner moved ten minutes ago (~4 points each, small
    # messages: the cheapest to move) and one it never moved (~8 points); b and c at ~23 %. With
    # the cooled-down bundles pinned, the band is out of reach; unpinned, the plan moves three
    # of them (the cheapest). The plan carried out releases no more of them than the goals need.
    state, cheap, dear, rest = _cooled_cluster()
    settings = resolve(state.config)
    recent = dict.fromkeys(cheap + rest, AT_MS - 10 * 60_000)
    assert not propose(state, settings, GREEDY, recently_moved=recent).solution.violation.ok
    free = propose(state, settings, GREEDY)
    assert free.solution.violation.ok
    free_again = {free.view.bundles[i] for i, _ in free.moves} & set(recent)
    mem = CycleMemory(shedding=PlannerMemory(recently_moved=MappingProxyType(recent)))
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, settings, mem)
    moved = {o.selection.bundle for o in cycle.unloads}
    assert cycle.acted and cycle.gate is None
    assert dear[0] in moved  # the bundle never moved goes first
    assert 0 < len(moved & set(recent)) < len(free_again) == 3


def test_a_broker_above_the_cap_moves_the_fewest_cooled_down_bundles_again() -> None:
    # a at ~30 % holds five bundles the planner moved ten minutes ago (~12, 6, 3, 3 and 3
    # points, one topic each: none splits); b, c and d at ~15 %; the cap at 25 %. Every plan
    # must move one of them again, and one is enough when the heaviest go first: the lightest
    # first moved two (a 3-point bundle, then the 6-point one that was needed anyway)
    sizes = (12.0, 6.0, 3.0, 3.0, 3.0)
    mine = bundle_names("tenant/a", len(sizes))
    rest = bundle_names("tenant/rest", 9)
    docs = {"broker-a:8080": broker({x: stats(s / 0.0098125, topics=1)
                                     for x, s in zip(mine, sizes, strict=True)})}
    for k, b in enumerate("bcd"):
        docs[f"broker-{b}:8080"] = broker({x: stats(PIECE, topics=1)
                                           for x in rest[3 * k:3 * k + 3]})
    state = snapshot(docs, config={"loadBalancerBrokerOverloadedThresholdPercentage": 25})
    recent = MappingProxyType(dict.fromkeys(mine, AT_MS - 10 * 60_000))
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, resolve(state.config), CycleMemory(
        shedding=PlannerMemory(recently_moved=recent)))
    assert cycle.acted, cycle.gate
    assert len({o.selection.bundle for o in cycle.unloads} & set(mine)) == 1


def test_no_bundle_moves_twice_for_a_gain_over_the_pinned_plan_within_the_models_error() -> None:
    # a at ~36 % holds sixteen bundles the planner moved ten minutes ago (~1.8 points each, one
    # topic) and four it never moved (~1 point); b and c at ~16 % hold four of ~4 points. Pinned,
    # the plan moves the four small ones (a range of ~11 points: the band missed); releasing one
    # cooled-down bundle meets it, ~4 points narrower, within twice the error of a model
    # calibrated on one snapshot (2 points): a bundle moved twice for a gain not told from
    # noise. The pinned plan is carried out (before, one bundle moved again)
    u = 1 / 0.0098125
    mine = bundle_names("tenant/mine", 16)
    small = bundle_names("tenant/small", 4)
    rest = bundle_names("tenant/rest", 8)
    docs = {"broker-a:8080": broker({**{x: stats(1.8 * u, topics=1) for x in mine},
                                     **{x: stats(u, topics=1) for x in small}}),
            "broker-b:8080": broker({x: stats(4 * u, topics=1) for x in rest[:4]}),
            "broker-c:8080": broker({x: stats(4 * u, topics=1) for x in rest[4:]})}
    state = snapshot(docs)
    settings = resolve(state.config)
    recent = dict.fromkeys(mine, AT_MS - 10 * 60_000)
    pinned = propose(state, settings, GREEDY, recently_moved=recent)
    assert not pinned.solution.violation.ok and propose(state, settings, GREEDY).solution.violation.ok
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, settings, CycleMemory(
        shedding=PlannerMemory(recently_moved=MappingProxyType(recent))))
    moved = {o.selection.bundle for o in cycle.unloads}
    assert cycle.acted, cycle.gate
    assert moved == set(small)


def test_an_early_plan_is_made_smaller_to_its_change_error() -> None:
    # a, c and d at ~58 % carry eleven ~5-point bundles each; b is empty. The load model is a
    # calibration on this one snapshot: a predicted change is off by up to EARLY_CHANGE_ERROR of
    # it. Filled to the others' level (~43 %), b may be at ~63 %, above the max now: the cycle
    # moves fewer bundles than the plan (before, all eight)
    u = 1 / 0.0098125
    docs = {f"broker-{k}:8080": broker({x: stats(5 * u, topics=1)
                                        for x in bundle_names(f"tenant/{k}", 11)})
            for k in "acd"}
    docs["broker-b:8080"] = broker({})
    state = snapshot(docs)
    settings = resolve(state.config)
    plan = propose(state, settings, GREEDY)
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, settings, CycleMemory(
        shedding=PlannerMemory()))
    assert cycle.acted, cycle.gate
    moved = {o.selection.bundle for o in cycle.unloads}
    assert 0 < len(moved) < len(plan.moves)
    assert moved < {plan.view.bundles[i] for i, _ in plan.moves}
    # b's usage after, at its uncertain end (each bundle ~5 points), no higher than the max now
    b = plan.usages_before()[plan.view.brokers.index("broker-b:8080")]
    assert b + 0.05 * len(moved) * (1 + EARLY_CHANGE_ERROR) <= max(plan.usages_before())


def test_no_bundle_moves_twice_for_a_cap_no_plan_can_meet() -> None:
    # a at ~45 % holds two bundles the planner moved ten minutes ago (~30 and ~12 points, one
    # topic each); b and c at ~23 % hold one bundle each; the cap at 25 %, below the cluster's
    # mean (~30 %): no plan meets it. Moving the 12-point bundle to b lowers the max (45 -> 35)
    # but leaves the range above the band (12 points): no reason to move it twice in the hour
    point = 1 / 0.0098125
    big, mid = bundle_names("tenant/a", 2)
    (b1,) = bundle_names("tenant/b", 1)
    (c1,) = bundle_names("tenant/c", 1)
    docs = {"broker-a:8080": broker({big: stats(30 * point, topics=1),
                                     mid: stats(12 * point, topics=1)}),
            "broker-b:8080": broker({b1: stats(20 * point, topics=1)}),
            "broker-c:8080": broker({c1: stats(20 * point, topics=1)})}
    state = snapshot(docs, config={"loadBalancerBrokerOverloadedThresholdPercentage": 25})
    recent = MappingProxyType(dict.fromkeys([big, mid], AT_MS - 10 * 60_000))
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, resolve(state.config), CycleMemory(
        shedding=PlannerMemory(recently_moved=recent)))
    assert not {o.selection.bundle for o in cycle.unloads} & set(recent)
    assert not cycle.splits


def test_the_band_is_judged_on_the_figures_the_plan_is_made_on() -> None:
    # a carries ~16 points more than the six others, and its twelve reports say so (a learnt
    # fit); its latest report reads 14 points low (noise): on the reports the cluster is inside
    # the band, on the load model's estimate of now (the report weighed against the fit, which
    # the plan uses) it is not
    names = bundle_names("tenant/ns", 56)
    own = {f"broker-{k}:8080": names[8 * k:8 * k + 8] for k in range(7)}
    a = "broker-0:8080"
    history = []
    for m in range(12):
        wave = 1.0 + 0.25 * ((m % 4) - 1.5) / 1.5
        history.append(_at(m, {b: dict.fromkeys(xs, (1.5 if b == a else 1.0) * PIECE * wave)
                               for b, xs in own.items()}, {a: -14.0} if m == 11 else None))
    latest = history[-1]
    settings = resolve(latest.config)
    reported = [r.max_resource_usage_with_weight(*settings.weights4())
                for r in latest.brokers.values()]
    assert max(reported) - min(reported) < 0.10
    model = LoadModel.learn(history)
    mem = CycleMemory(shedding=PlannerMemory(model=model, brokers=tuple(own)))
    cycle = PlannerLoadManager(GREEDY).run_cycle(latest, settings, mem)
    assert cycle.acted, cycle.gate
    assert {o.selection.broker for o in cycle.unloads} == {a}


def test_a_bundle_no_move_can_place_is_split_and_its_children_moved_in_the_same_cycle() -> None:
    # the hot bundle has four topics: no broker can take its ~55 points within the 10-point
    # band, so the planner splits it (range_equally_divide: two children of two topics each),
    # and again (four children of one topic, ~14 points each), and moves the children; a
    # one-topic hot bundle is never split (test above)
    state = _one_hot_bundle(topics=4)
    lm = PlannerLoadManager(GREEDY)
    cycle = lm.run_cycle(state, resolve(state.config))
    hot = "tenant/hot/0x00000000_0x80000000"
    halves = ("tenant/hot/0x00000000_0x40000000", "tenant/hot/0x40000000_0x80000000")
    assert [(s.bundle, s.children, s.unload) for s in cycle.splits][0] == (hot, halves, False)
    assert [s.bundle for s in cycle.splits] == [hot, *halves]
    quarters = {c for s in cycle.splits[1:] for c in s.children}
    effect = cycle.effect()
    assert effect.splits == cycle.splits and effect.moves
    moved = {m.bundle for m in effect.moves}
    assert hot not in moved and not moved & set(halves) and moved & quarters
    # a minute later the owner has not rewritten its report (a split leaves its load as it was):
    # the planner takes the report as its splits and moves predict it, and neither splits nor
    # moves again
    later = replace(state, captured_at=state.captured_at + 60_000)
    again = lm.run_cycle(later, resolve(state.config), cycle.memory)
    assert not again.splits and not again.acted
    assert again.gate is not None and again.gate.startswith("inside the band")


def test_a_split_bundle_stays_split_in_the_planners_view_until_its_owner_reports() -> None:
    # the split is taken as done for loadBalancerReportUpdateMaxIntervalMinutes at most; once
    # the owner's report lists the children, the report is read as it is
    state = _one_hot_bundle(topics=4)
    settings = resolve(state.config)
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, settings)
    pm = cycle.memory.shedding
    assert isinstance(pm, PlannerMemory) and len(pm.splitting) == 3
    later = replace(state, captured_at=state.captured_at + 60_000)
    seen, kept = _with_splits(later, settings, pm)
    a = seen.brokers["broker-a:8080"].lastStats
    quarters = [x for x in a if x.startswith("tenant/hot/") and not x.endswith("_0xffffffff")]
    assert len(quarters) == 4 and len(kept) == 3
    # each quarter one topic and a quarter of the traffic; the broker's total unchanged
    total = state.brokers["broker-a:8080"].lastStats
    assert [a[x].topics for x in quarters] == [1, 1, 1, 1]
    assert sum(a[x].msgRateIn for x in a) == pytest.approx(sum(s.msgRateIn for s in total.values()))
    limit = int(settings["loadBalancerReportUpdateMaxIntervalMinutes"])
    stale = replace(state, captured_at=state.captured_at + (limit + 1) * 60_000)
    assert _with_splits(stale, settings, pm) == (stale, ())


def test_a_cluster_above_the_cap_on_average_is_not_shuffled_on_a_small_gain() -> None:
    # all three brokers above the 85 % cap (95, 91, 91 %): no plan relieves them all, and the
    # best one (crumbs from a to b and c) gains three points, within the model's error: moving
    # on it only shuffles bundles among overloaded brokers, cycle after cycle (issue 29: bundles
    # moved twice); a broker above the cap of a cluster that has room is still relieved (above)
    names = bundle_names("tenant/ns", 70)
    docs = {"broker-a:8080": broker({**{x: stats(PIECE) for x in names[:22]},
                                     **{x: stats(CRUMB) for x in names[66:]}}),
            "broker-b:8080": broker({x: stats(PIECE) for x in names[22:44]}),
            "broker-c:8080": broker({x: stats(PIECE) for x in names[44:66]})}
    state = snapshot(docs)
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, resolve(state.config))
    assert not cycle.acted
    assert cycle.gate is not None and "within the load model's error" in cycle.gate


def test_only_a_bundle_wider_than_the_band_is_split_in_the_loop() -> None:
    # find_splits names bundles no broker can take where the plan leaves the others; in the loop
    # a split (permanent) is made only of a bundle carrying more of its broker than the band is
    # wide: the hot bundle (~55 points), never the crumb (~1 point)
    state = _one_hot_bundle(topics=4)
    p = propose(state, resolve(state.config), GREEDY)
    hot, crumb = bundle_names("tenant/hot", 2)
    assert _wider_than_band(p, hot) and not _wider_than_band(p, crumb)



def test_cooled_down_bundles_stay_unless_their_move_is_what_meets_the_cap() -> None:
    # a (~71 %) holds only bundles the planner moved ten minutes ago; e carries a one-topic hot
    # bundle (~58 %: no move or split brings the band within reach), b is at ~23 %, c and d at
    # ~43 %. Moving a's bundles again would lower the max (71 -> ~58), but nothing is above the
    # 85 % cap: no cooled-down bundle moves (issue 29: no bundle moved twice in an hour;
    # before, the plan nearer its own capacity target, the most loaded broker less the model's
    # margin, was carried out and moved them again)
    names = bundle_names("tenant/ns", 42)
    hot = bundle_names("tenant/hot", 1)
    docs = {"broker-a:8080": broker({x: stats(PIECE) for x in names[:17]}),
            "broker-b:8080": broker({x: stats(PIECE) for x in names[17:22]}),
            "broker-c:8080": broker({x: stats(PIECE) for x in names[22:32]}),
            "broker-d:8080": broker({x: stats(PIECE) for x in names[32:]}),
            "broker-e:8080": broker({hot[0]: stats(HOT, topics=1)})}
    state = snapshot(docs)
    settings = resolve(state.config)
    recent = dict.fromkeys(names[:17], AT_MS - 10 * 60_000)
    free = propose(state, settings, GREEDY)
    assert max(free.usages_after()) < max(free.usages_before()) - 0.05
    assert {free.view.bundles[i] for i, _ in free.moves} & set(recent)
    mem = CycleMemory(shedding=PlannerMemory(recently_moved=MappingProxyType(recent)))
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, settings, mem)
    assert not {o.selection.bundle for o in cycle.unloads} & set(recent)


def _two_big_bundles() -> tuple[ClusterState, str, str]:
    """Four brokers below the cap: a (~81 %) holds a 14-point bundle, b (~51 %) a 20-point one,
    c and d small pieces; the two big bundles' names."""
    a14, b20 = bundle_names("tenant/big", 2)
    rest = bundle_names("tenant/ns", 48)
    docs = {"broker-a:8080": broker({a14: stats(1427.0), **{x: stats(PIECE) for x in rest[:16]}}),
            "broker-b:8080": broker({b20: stats(2038.0), **{x: stats(PIECE) for x in rest[16:23]}}),
            "broker-c:8080": broker({x: stats(PIECE) for x in rest[23:35]}),
            "broker-d:8080": broker({x: stats(PIECE) for x in rest[35:]})}
    return snapshot(docs), a14, b20


def test_a_plan_predicted_to_widen_the_range_is_not_carried_out_whatever_it_gains_on_the_max(
) -> None:
    # a at ~81 % sheds its 14-point bundle to d (55 -> 69 %), b its 20-point bundle to c
    # (51 -> 71 %): the max falls by ten points, far beyond the model's error, but the range
    # widens from 30 to 40 points: worse than doing nothing on one goal, it is not carried out
    # (issue 29: no cycle that worsens max or spread; Cruise Control: an action must not
    # violate a goal already met)
    state, a14, b20 = _two_big_bundles()
    p = propose(state, resolve(state.config), GREEDY)
    view = p.view
    at = view.index()
    moves = ((view.bundles.index(a14), at["broker-d:8080"]),
             (view.bundles.index(b20), at["broker-c:8080"]))
    after = Assignment(view, p.rules, p.costs)
    after.apply(moves)
    widening = replace(p, after=after, order=moves)
    before = max(p.usages_before()), max(p.usages_before()) - min(p.usages_before())
    now = max(after.u), max(after.u) - min(after.u)
    assert now[0] < before[0] - 2 * GAIN_ERRORS * view.model.margin(now[0])  # a gain told from noise
    assert now[1] > before[1] + 0.05
    why = _noise(widening, 0.85)
    assert why is not None and "above doing nothing's" in why
    assert _noise(p, 0.85) is None  # the planner's own plan narrows both


def test_a_split_bundles_children_inherit_its_cool_down() -> None:
    # the hot bundle was moved ten minutes ago: split (no move can place it), its children carry
    # its traffic, so they cool down from its move, not from now, and not at all: moved again,
    # a child is the parent's traffic moved twice within the hour
    state = _one_hot_bundle(topics=4)
    hot = "tenant/hot/0x00000000_0x80000000"
    then = AT_MS - 10 * 60_000
    mem = CycleMemory(shedding=PlannerMemory(recently_moved=MappingProxyType({hot: then})))
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, resolve(state.config), mem)
    children = {c for s in cycle.splits for c in s.children}
    assert len(cycle.splits) == 3 and len(children) == 6
    pm = cycle.memory.shedding
    assert isinstance(pm, PlannerMemory)
    moved = {o.selection.bundle for o in cycle.unloads}
    assert all(pm.recently_moved[c] == (state.captured_at if c in moved else then)
               for c in children)
    # moved again only as the band needs (the fewest of them), never all four quarters
    assert len(moved & children) < 4


def test_the_band_met_again_without_sending_a_bundle_back_where_it_came_from() -> None:
    # the cluster of test_the_goals_met_again_move_the_fewest_cooled_down_bundles_again, where
    # the fewest cooled-down bundles meeting the band are two of the cheap ones, one of them to
    # b; say that one left b ten minutes ago. A move back would undo the planner's own, so the plan is
    # made again with it pinned, and another cooled-down bundle takes its place (before, the
    # whole re-move plan was dropped and the band missed: n=12 seeds 5 and 10, a broker back
    # from a restart, 23 cycles and never)
    state, cheap, dear, rest = _cooled_cluster()
    settings = resolve(state.config)
    recent = MappingProxyType(dict.fromkeys(cheap + rest, AT_MS - 10 * 60_000))
    lm = PlannerLoadManager(GREEDY)
    first = lm.run_cycle(state, settings, CycleMemory(shedding=PlannerMemory(
        recently_moved=recent)))
    sent = {o.selection.bundle: o.destination for o in first.unloads}
    # the plan with no bundle's origin known
    to_b = [x for x in cheap if sent.get(x) == "broker-b:8080"]
    assert len(to_b) == 1
    came = MappingProxyType({to_b[0]: "broker-b:8080"})
    cycle = lm.run_cycle(state, settings, CycleMemory(shedding=PlannerMemory(
        recently_moved=recent, came_from=came)))
    assert cycle.acted and cycle.gate is None
    moved = {o.selection.bundle: o.destination for o in cycle.unloads}
    assert to_b[0] not in moved
    assert set(moved) & set(recent)  # the band met by other cooled-down bundles
    assert dear[0] in moved


def _cooled_cluster() -> tuple[ClusterState, list[str], list[str], list[str]]:
    """a at ~39 % with seven cheap bundles (~4 points each, small messages) and one dear one
    (~8 points); b and c at ~23 % with five bundles each: (state, cheap, dear, rest)."""
    cheap = bundle_names("tenant/cheap", 7)
    dear = bundle_names("tenant/dear", 1)
    rest = bundle_names("tenant/rest", 10)
    docs = {"broker-a:8080": broker({**{x: stats(1600.0, 256) for x in cheap},
                                     dear[0]: stats(2 * PIECE)}),
            "broker-b:8080": broker({x: stats(PIECE) for x in rest[:5]}),
            "broker-c:8080": broker({x: stats(PIECE) for x in rest[5:]})}
    return snapshot(docs), cheap, dear, rest


def _stale_cluster(minute_d: int) -> ClusterState:
    """At minute 10, a (18 bundles of ~4 points: ~75 %), b and c (16: ~67 %) report the traffic
    of now; d carries what b and c carry, but its report was last written at ``minute_d``, when
    the traffic (growing 2 % a minute) was lower: its bundles read 2 % less per minute since."""
    names = bundle_names("tenant/ns", 66)
    own = {"broker-a:8080": names[:18], "broker-b:8080": names[18:34],
           "broker-c:8080": names[34:50], "broker-d:8080": names[50:]}
    docs = {}
    for b, xs in own.items():
        then = minute_d if b == "broker-d:8080" else 10
        doc = broker({x: stats(PIECE / 1.02 ** (10 - then)) for x in xs})
        doc["lastUpdate"] = AT_MS + then * 60_000
        docs[b] = doc
    return replace(snapshot(docs), captured_at=AT_MS + 10 * 60_000)


def test_a_report_not_rewritten_is_carried_along_the_traffics_trend_before_the_band_is_judged(
        ) -> None:
    # d's report is five minutes old: read as written the cluster is 14 points wide; carried
    # along the trend (at most loadBalancerReportUpdateThresholdPercentage: d would have
    # rewritten a report its traffic outgrew by more) d is ~67 % and the range 8 points
    state = _stale_cluster(5)
    settings = resolve(state.config)
    trend = math.log(1.02)
    unaware = PlannerLoadManager(GREEDY).run_cycle(state, settings)
    assert unaware.acted, unaware.gate  # the stale report taken as now: a plan fills d
    mem = CycleMemory(shedding=PlannerMemory(trend=trend))
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, settings, mem)
    assert not cycle.acted
    assert cycle.gate is not None and cycle.gate.startswith("inside the band"), cycle.gate


def test_the_traffics_trend_is_the_median_bundles_growth_and_a_surge_is_no_trend() -> None:
    names = bundle_names("tenant/ns", 6)
    before = MappingProxyType(dict.fromkeys(names, (AT_MS, 2 * PIECE)))

    def at_minute_2(rates: list[float], written: int = 2) -> ClusterState:
        doc = broker({x: stats(r) for x, r in zip(names, rates, strict=True)})
        doc["lastUpdate"] = AT_MS + written * 60_000
        return snapshot({"broker-a:8080": doc})

    # five bundles grew 2 % a minute over the two minutes since, one tripled (a hot one)
    grown = [PIECE * 1.02 ** 2] * 5 + [3 * PIECE]
    rates, trend = _trend(at_minute_2(grown), before, 0.0, 10.0)
    assert trend == pytest.approx(math.log(1.02))
    assert rates[names[0]] == (AT_MS + 2 * 60_000, 2 * PIECE * 1.02 ** 2)
    # a report not rewritten since says nothing new: the trend stays
    assert _trend(at_minute_2(grown, written=0), before, 0.01, 10.0)[1] == 0.01
    # most bundles tripled: faster than a report a minute (10 %): a step, not a trend
    assert _trend(at_minute_2([3 * PIECE] * 6), before, 0.01, 10.0)[1] == 0.0


def test_a_move_onto_a_learnt_broker_counts_whole_in_the_planners_figures() -> None:
    # a, b and c report ten minutes of varied traffic: their fits are learnt, and a report
    # weighs little against the fit (LoadModel.now). A pending move of one of b's bundles onto
    # a (with_moves) raises a's figure by the fit's slope times the bundle's driver, whole: read
    # at the written report's traffic, the fit pulled it back by the fit's weight
    names = bundle_names("tenant/ns", 24)
    own = {"broker-a:8080": names[:8], "broker-b:8080": names[8:16],
           "broker-c:8080": names[16:]}
    history = []
    for m in range(10):
        wave = 1.0 + 0.25 * ((m % 4) - 1.5) / 1.5
        history.append(_at(m, {b: dict.fromkeys(xs, PIECE * wave) for b, xs in own.items()}))
    model = LoadModel.learn(history)
    a, b = "broker-a:8080", "broker-b:8080"
    assert model.leans(a)
    last = history[-1]
    x = own[b][0]
    moved = with_moves(last, model, [(x, b, a)])
    gained = percents_now(model, a, moved.brokers[a])["cpu"] - percents_now(
        model, a, last.brokers[a])["cpu"]
    driver = model.drivers([last.brokers[b].lastStats[x]]).cpu
    assert gained == pytest.approx(model.fits[a]["cpu"].slope * driver)
    # a report as written reads as before
    assert percents_now(model, a, last.brokers[a])["cpu"] == pytest.approx(
        model.now(a, "cpu", last.brokers[a].resource_percents()["cpu"]))


def test_the_plan_is_made_on_the_reports_carried_along_the_traffics_trend() -> None:
    # d's report is ten minutes old under traffic growing 2 % a minute: read as written d is
    # ~55 %, carried along the trend (at most loadBalancerReportUpdateThresholdPercentage, 10 %)
    # ~60 %; still out of the band, the cycle plans, and on the carried figures: d's report in
    # the plan's view is the carried one (a stale destination filled to the max as read
    # overshoots it in truth)
    state = _stale_cluster(0)
    settings = resolve(state.config)
    d = "broker-d:8080"
    unaware = PlannerLoadManager(GREEDY).run_cycle(state, settings)
    mem = CycleMemory(shedding=PlannerMemory(trend=math.log(1.02)))
    cycle = PlannerLoadManager(GREEDY).run_cycle(state, settings, mem)
    assert unaware.acted and cycle.acted, (unaware.gate, cycle.gate)
    read = state.brokers[d]
    carried_d = cycle.state.brokers[d]
    assert carried_d.cpu.percent > read.cpu.percent + 2.0
    x = next(iter(read.lastStats))
    assert carried_d.lastStats[x].msgRateIn == pytest.approx(read.lastStats[x].msgRateIn * 1.1)
    assert carried_d.lastUpdate == read.lastUpdate
    assert unaware.state.brokers[d] == read


def _one_hot_bundle_and_a_crowd() -> ClusterState:
    """Broker a at ~62 % (a one-topic bundle of ~55 points and a piece), b at ~43 % (ten pieces),
    c nearly idle: no move brings the hot bundle's broker within 10 points of the others, so
    every plan misses the band; the planner's plan still lowers the max and the range by far
    more than the model's error."""
    hot = bundle_names("tenant/hot", 1)[0]
    small = bundle_names("tenant/small", 12)
    docs = {"broker-a:8080": broker({hot: stats(HOT, topics=1), small[0]: stats(PIECE)}),
            "broker-b:8080": broker({x: stats(PIECE) for x in small[1:11]}),
            "broker-c:8080": broker({small[11]: stats(CRUMB)})}
    return snapshot(docs)


def test_a_plan_missing_the_band_waits_while_the_traffics_rise_would_outrun_its_gain() -> None:
    # the same plan, carried out with no trend, waits under a rising one: grown by the traffic's
    # rise until the next cycle, its max and range are above the cluster's now (a worsening
    # cycle in truth, issue 29); it is tried again next cycle, not remembered as hopeless
    state = _one_hot_bundle_and_a_crowd()
    settings = resolve(state.config)
    p = propose(state, settings, GREEDY)
    assert p.moves and not p.solution.violation.ok
    before, after = p.usages_before(), p.usages_after()
    outrun = max(before) / max(after) * 1.01
    assert _noise(p, 0.85) is None and _noise(p, 0.85, 0.99) is None  # a falling trend: no wait
    assert _noise(p, 0.85, outrun) is not None
    still = min(max(before) / max(after), (max(before) - min(before)) / (max(after) - min(after)))
    assert _noise(p, 0.85, still * 0.99) is None  # a rise its gain outruns: carried out
    flat = PlannerLoadManager(GREEDY).run_cycle(state, settings)
    assert flat.acted
    rising = PlannerLoadManager(GREEDY).run_cycle(
        state, settings, CycleMemory(shedding=PlannerMemory(trend=math.log(1.2))))
    assert not rising.acted and rising.gate is not None and "not carried out yet" in rising.gate
    pm = rising.memory.shedding
    assert isinstance(pm, PlannerMemory) and not pm.hopeless
