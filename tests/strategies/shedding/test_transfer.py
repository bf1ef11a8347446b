"""Pulsar's ``TransferShedderTest``, scenario by scenario, with its exact floating-point figures.

The Java test's stores are ``HashMap`` s (:func:`ext_helpers.store` keeps their iteration order, which
decides float summation order and ties); ``getContext()`` turns debug mode on and the hit-count
threshold down to 0. Scenarios that draw random loads (``testRandomLoad``, ``testRandomLoadStats``)
use a seeded generator instead of ``new Random()``.
"""

from __future__ import annotations

import random
import statistics

import pytest

from lbctl.explain.words import text
from lbctl.model.decision import Label, Reason, unloads_key
from lbctl.strategies.placement.broker_filters import (
    BrokerLookup,
    FilterContext,
    FilterError,
    IsolationPoliciesFilter,
    IsolationPolicy,
    Policies,
    make_transferable,
    shedding_with_policies_allowed,
)
from lbctl.strategies.shedding.transfer import ShedderInput, TransferShedder
from tests.ext_helpers import NOW, cpu_load, shedder_settings, store, top_bundles

SETUP_AVG = 0.36400000000000005
SETUP_STD = 0.3982762860126121
D1 = "my-tenant/my-namespaceD/0x00000000_0x0FFFFFFF"
D2 = "my-tenant/my-namespaceD/0x0FFFFFFF_0xFFFFFFFF"
E1 = "my-tenant/my-namespaceE/0x00000000_0x0FFFFFFF"
E2 = "my-tenant/my-namespaceE/0x0FFFFFFF_0xFFFFFFFF"
C1 = "my-tenant/my-namespaceC/0x00000000_0x0FFFFFFF"
B = [f"broker{i}:8080" for i in range(1, 6)]


class Ctx:
    """``LoadManagerContext`` of the Java test: two mutable stores and the registry."""

    def __init__(self, settings=None, available=None):
        self.settings = settings or shedder_settings()
        self.loads: dict = {}
        self.tops: dict = {}
        self.available = list(B) if available is None else available

    def push_tops(self, broker, prefix, *loads):
        self.tops[broker] = top_bundles(self.settings, prefix, *loads)

    def push_load(self, broker, load, **fields):
        from lbctl.records import replace

        data = cpu_load(self.settings, load, self.tops.get(broker))
        self.loads[broker] = replace(data, **fields) if fields else data

    def input(self, recently_bundles=None, recently_brokers=None, transferable=None,
              is_owner=None, settings=None):
        return ShedderInput(settings or self.settings, NOW, store(self.loads), store(self.tops),
                            self.available, recently_bundles or {}, recently_brokers or {},
                            is_owner, transferable)


def setup_context(settings=None) -> Ctx:
    ctx = Ctx(settings)
    for b, (ns, l1, l2) in zip(B, [("A", 1e6, 2e6), ("B", 1e6, 3e6), ("C", 2e6, 4e6),
                                   ("D", 2e6, 6e6), ("E", 2e6, 7e6)], strict=True):
        ctx.push_tops(b, f"my-tenant/my-namespace{ns}", l1, l2)
    for b, load in zip(B, [2, 4, 6, 80, 90], strict=True):
        ctx.push_load(b, load)
    return ctx


def run(ctx: Ctx, hit=0, **kw):
    return TransferShedder().find_bundles_for_unloading(ctx.input(**kw), hit)


def dec(src, bundle, dst, reason="Overloaded"):
    return (src, bundle, dst, "Success", reason)


def test_empty_broker_load_data():
    r = run(Ctx())
    assert r.decisions == ()
    assert r.skip == (Label.SKIP, Reason.NO_BROKERS)


def test_no_owner_load_data():
    ctx = setup_context()
    r = run(ctx, is_owner=lambda bundle, broker: False)
    assert r.decisions == () and r.skip == (Label.SKIP, Reason.NO_BUNDLES)
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


def test_empty_top_bundles_load_data():
    ctx = Ctx()
    for b, load in zip(B, [2, 4, 6, 80, 90], strict=True):
        ctx.push_load(b, load)
    r = run(ctx)
    assert r.decisions == () and r.skip == (Label.SKIP, Reason.NO_LOAD_DATA)
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


def test_out_dated_load_data():
    from lbctl.records import replace

    ctx = setup_context()
    assert len(run(ctx).decisions) == 2
    ctx.loads = {b: replace(d, updatedAt=0) for b, d in ctx.loads.items()}
    r = run(ctx)
    assert r.decisions == () and r.skip == (Label.SKIP, Reason.OUTDATED_DATA)


def test_recently_unloaded_brokers():
    ctx = setup_context()
    old = NOW - int(ctx.settings["loadBalancerBrokerLoadDataTTLInSeconds"]) * 1001
    r = run(ctx, recently_brokers={"broker1:8080": old})
    assert unloads_key(r.decisions) == {dec("broker5:8080", E1, "broker1:8080"),
                                        dec("broker4:8080", D1, "broker2:8080")}
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)
    assert r.expired_brokers == ("broker1:8080",)  # removed from the map, as Pulsar does
    r = run(ctx, recently_brokers={"broker1:8080": NOW})
    assert r.decisions == () and r.skip == (Label.SKIP, Reason.COOL_DOWN)


def test_recently_unloaded_bundles():
    ctx = setup_context()
    r = run(ctx, recently_bundles=dict.fromkeys((E1, E2, D1, D2), NOW))
    assert unloads_key(r.decisions) == {dec("broker3:8080", C1, "broker1:8080")}
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


def test_get_available_brokers_failed():
    ctx = setup_context()
    ctx.available = None
    r = run(ctx)
    assert r.skip == (Label.FAILURE, Reason.UNKNOWN)
    assert (r.avg, r.std) == (0.0, 0.0)


def _lookups():
    return {b: BrokerLookup("3.0.0") for b in B}


def _transferable(ctx: Ctx, policies: Policies, pipeline, settings=None):
    fctx = FilterContext(settings or ctx.settings, ctx.loads, policies)
    return make_transferable(_lookups(), fctx, pipeline)


def test_bundles_with_isolation_policies():
    ctx = setup_context(shedder_settings(loadBalancerSheddingBundlesWithPoliciesEnabled=True))
    policies = Policies((IsolationPolicy(("my-tenant/my-namespaceE",), ("broker5",), (), 1),))
    pipeline = (IsolationPoliciesFilter(),)
    r = run(ctx, transferable=_transferable(ctx, policies, pipeline))
    assert unloads_key(r.decisions) == {dec("broker4:8080", D1, "broker1:8080")}
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)

    unload_mode = shedder_settings(loadBalancerSheddingBundlesWithPoliciesEnabled=True,
                                loadBalancerTransferEnabled=False)
    r = run(ctx, settings=unload_mode,
            transferable=_transferable(ctx, policies, pipeline, unload_mode))
    assert unloads_key(r.decisions) == {dec("broker4:8080", D1, None)}

    # every namespace has an isolation policy, shedding such bundles disabled
    everywhere = Policies((IsolationPolicy((".*",), ("broker5",), (), 1),))
    for transfer in (True, False):
        conf = shedder_settings(loadBalancerSheddingBundlesWithPoliciesEnabled=False,
                             loadBalancerTransferEnabled=transfer)
        r = run(ctx, settings=conf, transferable=_transferable(ctx, everywhere, pipeline, conf))
        assert r.decisions == () and r.skip == (Label.SKIP, Reason.NO_BUNDLES)
        assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


def test_bundles_with_anti_affinity_group():
    ctx = setup_context(shedder_settings(loadBalancerSheddingBundlesWithPoliciesEnabled=True))
    policies = Policies(anti_affinity={f"my-tenant/my-namespace{x}": "group" for x in "ABCDE"})

    class ClearAll:
        name = "broker_anti_affinity_group_filter"

        def __call__(self, brokers, bundle, fctx):
            return {}

    r = run(ctx, transferable=_transferable(ctx, policies, (ClearAll(),)))
    assert r.decisions == () and r.skip == (Label.SKIP, Reason.NO_BUNDLES)
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)

    class OnlyE1:
        name = "broker_anti_affinity_group_filter"

        def __call__(self, brokers, bundle, fctx):
            return brokers if bundle.lower() == E1.lower() else {}

    r = run(ctx, transferable=_transferable(ctx, policies, (OnlyE1(),)))
    assert unloads_key(r.decisions) == {dec("broker5:8080", E1, "broker1:8080")}


def test_filter_has_exception():
    ctx = setup_context(shedder_settings(loadBalancerSheddingBundlesWithPoliciesEnabled=True))

    class Failing:
        name = "Test-Filter"

        def __call__(self, brokers, bundle, fctx):
            raise FilterError("test")

    r = run(ctx, transferable=_transferable(ctx, Policies(), (Failing(),)))
    assert r.decisions == () and r.skip == (Label.SKIP, Reason.NO_BUNDLES)
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


@pytest.mark.parametrize("isolation, anti_affinity, enabled, expected", [
    (True, True, True, True), (True, True, False, False), (True, False, True, True),
    (True, False, False, False), (False, True, True, True), (False, True, False, False),
    (False, False, True, True), (False, False, False, True),
])
def test_is_load_balancer_shedding_bundles_with_policies_enabled(isolation, anti_affinity,
                                                                 enabled, expected):
    assert shedding_with_policies_allowed(isolation, anti_affinity, enabled) is expected


def test_target_std():
    ctx = Ctx(available=B[:3])
    for b, load in zip(B[:3], [10, 20, 30], strict=True):
        ctx.push_load(b, load)
    for b, ns, v in zip(B[:3], "ABC", [30, 40, 50], strict=True):
        ctx.push_tops(b, f"my-tenant/my-namespace{ns}", v, v)
    r = run(ctx)
    assert r.decisions == () and r.skip == (Label.SKIP, Reason.HIT_COUNT)
    assert r.avg == 0.2000000063578288
    assert r.std == 0.08164966587949089


def test_single_top_bundles_load_data():
    ctx = setup_context()
    for b, ns, v in zip(B, "ABCDE", [1, 2, 6, 10, 70], strict=True):
        ctx.push_tops(b, f"my-tenant/my-namespace{ns}", v)
    r = run(ctx)
    assert r.decisions == () and r.skip == (Label.SKIP, Reason.NO_BUNDLES)
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


def test_bundle_throughput_larger_than_offload_threshold():
    ctx = setup_context()
    ctx.push_tops("broker4:8080", "my-tenant/my-namespaceD", 1_000_000_000, 1_000_000_000)
    ctx.push_tops("broker5:8080", "my-tenant/my-namespaceE", 1_000_000_000, 1_000_000_000)
    r = run(ctx)
    assert unloads_key(r.decisions) == {dec("broker3:8080", C1, "broker1:8080")}
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


def test_zero_bundle_throughput():
    from lbctl.model.load import NamespaceBundleStats
    from lbctl.records import replace

    ctx = setup_context()
    ctx.tops = {b: tuple(replace(t, stats=NamespaceBundleStats()) for t in tops)
                for b, tops in ctx.tops.items()}
    r = run(ctx)
    assert r.decisions == () and r.skip == (Label.SKIP, Reason.NO_BUNDLES)
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


@pytest.mark.parametrize(("version", "skips"), [("3.3.2", False), ("4.0.0", False),
                                               ("3.3.3", True), ("4.0.1", True)])
def test_zero_bundle_throughput_by_release(version, skips):
    """``testZeroBundleThroughput`` came with PR #23626 (3.3.3, 4.0.1). Before it
    (``TransferShedder`` at 028ed6295a34) a top bundle without throughput was still decided, but
    marked no traffic: ``stats.offload`` never ran, so the min broker stayed broker1 and no broker
    counted towards ``loadBalancerMaxNumberOfBrokerSheddingPerCycle`` — every other broker sent
    one bundle (which of its two equal ones: ``Map.of`` order, not pinned here) to broker1."""
    from lbctl.model.load import NamespaceBundleStats
    from lbctl.records import replace
    ctx = setup_context(release_settings(version))
    ctx.tops = {b: tuple(replace(t, stats=NamespaceBundleStats()) for t in tops)
                for b, tops in ctx.tops.items()}
    r = run(ctx)
    if skips:
        assert r.decisions == () and r.skip == (Label.SKIP, Reason.NO_BUNDLES)
    else:
        assert {(s, d, rs) for s, _, d, _, rs in unloads_key(r.decisions)} == {
            (b, "broker1:8080", "Overloaded") for b in B[1:]}
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


def release_settings(version):
    """``getContext()``'s configuration on another release's profile (its defaults beneath)."""
    from lbctl.config import Settings
    from lbctl.versions import resolve

    return Settings.defaults(resolve(version)).with_values(
        loadBalancerDebugModeEnabled=True, loadBalancerSheddingBundlesWithPoliciesEnabled=False,
        loadBalancerSheddingConditionHitCountThreshold=0)


def test_target_std_after_transfer():
    ctx = setup_context()
    ctx.push_load("broker4:8080", 55)
    ctx.push_load("broker5:8080", 65)
    r = run(ctx)
    assert unloads_key(r.decisions) == {dec("broker5:8080", E1, "broker1:8080")}
    assert r.avg == 0.26400000000000007
    assert r.std == 0.27644891028904417


def _two_brokers(ctx_settings=None):
    return Ctx(ctx_settings, available=B[:2])


def test_unload_bundles_greater_than_target_throughput():
    ctx = _two_brokers()
    ctx.push_tops("broker1:8080", "my-tenant/my-namespaceA", 1e6, 2e6, 3e6, 4e6, 5e6)
    ctx.push_tops("broker2:8080", "my-tenant/my-namespaceB", 1e8, 1.8e8, 2.2e8, 2.5e8, 2.5e8)
    ctx.push_load("broker1:8080", 10)
    ctx.push_load("broker2:8080", 1000)
    r = run(ctx)
    a = "my-tenant/my-namespaceA/"
    b = "my-tenant/my-namespaceB/"
    assert unloads_key(r.decisions) == {
        dec("broker2:8080", b + "0x00000000_0x1FFFFFFF", "broker1:8080"),
        dec("broker2:8080", b + "0x1FFFFFFF_0x2FFFFFFF", "broker1:8080"),
        dec("broker2:8080", b + "0x2FFFFFFF_0x3FFFFFFF", "broker1:8080"),
        dec("broker1:8080", a + "0x00000000_0x1FFFFFFF", "broker2:8080"),
        dec("broker1:8080", a + "0x1FFFFFFF_0x2FFFFFFF", "broker2:8080"),
        dec("broker1:8080", a + "0x2FFFFFFF_0x3FFFFFFF", "broker2:8080"),
        dec("broker1:8080", a + "0x3FFFFFFF_0x4FFFFFFF", "broker2:8080"),
    }
    assert (r.avg, r.std) == (5.05, 4.95)
    assert r.final_std == 0.050000004900021836


def test_swap_gain_counts_only_in_debug_mode():
    """Q3: with debug mode off the swapped-back traffic is not subtracted (reference §2.7)."""
    ctx = _two_brokers(shedder_settings(loadBalancerDebugModeEnabled=False))
    ctx.push_tops("broker1:8080", "my-tenant/my-namespaceA", 1e6, 2e6, 3e6, 4e6, 5e6)
    ctx.push_tops("broker2:8080", "my-tenant/my-namespaceB", 1e8, 1.8e8, 2.2e8, 2.5e8, 2.5e8)
    ctx.push_load("broker1:8080", 10)
    ctx.push_load("broker2:8080", 1000)
    r = run(ctx)
    assert r.final_std == 0.04999999500002989


def test_skip_bundles_greater_than_target_throughput_after_split():
    ctx = _two_brokers(shedder_settings(loadBalancerBrokerLoadTargetStd=0.20))
    ctx.push_tops("broker1:8080", "my-tenant/my-namespaceA", 1, 500_000_000)
    ctx.push_tops("broker2:8080", "my-tenant/my-namespaceB", 500_000_000, 500_000_000)
    ctx.push_load("broker1:8080", 50)
    ctx.push_load("broker2:8080", 100)
    r = run(ctx)
    assert r.decisions == () and r.skip == (Label.SKIP, Reason.NO_BUNDLES)


def test_unload_bundles_less_than_target_throughput_after_split():
    ctx = _two_brokers()
    ctx.push_tops("broker1:8080", "my-tenant/my-namespaceA", 1e6, 2e6, 3e6, 4e6, 5e6)
    ctx.push_tops("broker2:8080", "my-tenant/my-namespaceB", 490_000_000, 510_000_000)
    ctx.push_load("broker1:8080", 10)
    ctx.push_load("broker2:8080", 1000)
    r = run(ctx)
    assert unloads_key(r.decisions) == {
        dec("broker2:8080", "my-tenant/my-namespaceB/0x00000000_0x0FFFFFFF", "broker1:8080")}
    assert (r.avg, r.std) == (5.05, 4.95)
    assert r.final_std == 0.050000004900021836


def test_unload_bundles_greater_than_target_throughput_after_split():
    ctx = _two_brokers()
    ctx.push_tops("broker1:8080", "my-tenant/my-namespaceA", 2_400_000, 2_400_000)
    ctx.push_tops("broker2:8080", "my-tenant/my-namespaceB", 5_000_000, 5_000_000)
    ctx.push_load("broker1:8080", 48)
    ctx.push_load("broker2:8080", 100)
    r = run(ctx)
    got = unloads_key(r.decisions)
    assert len(got) == 2
    assert {(s, d, rs) for s, _, d, _, rs in got} == {
        ("broker1:8080", "broker2:8080", "Overloaded"), ("broker2:8080", "broker1:8080", "Overloaded")}
    assert (r.avg, r.std) == (0.74, 0.26)
    assert r.final_std == 2.5809568279517847e-8


def test_min_broker_with_low_traffic():
    ctx = setup_context()
    ctx.push_load("broker2:8080", 4, msgThroughputEMA=10)
    ctx.push_load("broker4:8080", 55)
    ctx.push_load("broker5:8080", 65)
    r = run(ctx)
    assert unloads_key(r.decisions) == {dec("broker5:8080", E1, "broker1:8080"),
                                        dec("broker4:8080", D1, "broker2:8080", "Underloaded")}
    assert r.avg == 0.26400000000000007
    assert r.std == 0.27644891028904417


@pytest.mark.parametrize(("ema", "underloaded"), [(10, False), (0, True), (0.5, True)])
def test_min_broker_with_low_traffic_before_22321(ema, underloaded):
    """``testMinBrokerWithLowTraffic``'s brokers on a release before PR #22321 (3.1.3): the
    underloaded test was ``weightedMaxEMA < avg·m`` or a throughput EMA under 1 B/s, not a fraction
    of the max broker's. broker2 (load 4 %, above avg·m = 0.264 × 0.125) with a throughput EMA of
    10 is not underloaded, so only broker5's overload moves a bundle; with an EMA under 1 B/s (the
    test's earlier form, ``testMinBrokerWithZeroTraffic``) broker4's bundle goes to broker2."""
    ctx = setup_context(release_settings("3.1.3"))
    ctx.push_load("broker2:8080", 4, msgThroughputEMA=ema)
    ctx.push_load("broker4:8080", 55)
    ctx.push_load("broker5:8080", 65)
    r = run(ctx)
    expected = {dec("broker5:8080", E1, "broker1:8080")}
    if underloaded:
        expected.add(dec("broker4:8080", D1, "broker2:8080", "Underloaded"))
    assert unloads_key(r.decisions) == expected
    assert r.avg == 0.26400000000000007


def test_min_broker_with_lower_load_than_avg():
    ctx = setup_context()
    ctx.push_load("broker2:8080", 3)
    ctx.push_load("broker4:8080", 55)
    ctx.push_load("broker5:8080", 65)
    r = run(ctx)
    assert unloads_key(r.decisions) == {dec("broker5:8080", E1, "broker1:8080"),
                                        dec("broker4:8080", D1, "broker2:8080", "Underloaded")}
    assert r.avg == 0.262
    assert r.std == 0.2780935094532054


def test_max_number_of_transfers_per_shedder_cycle():
    ctx = setup_context(shedder_settings(loadBalancerMaxNumberOfBrokerSheddingPerCycle=10))
    r = run(ctx)
    assert unloads_key(r.decisions) == {dec("broker5:8080", E1, "broker1:8080"),
                                        dec("broker4:8080", D1, "broker2:8080")}
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


def test_load_balancer_shedding_condition_hit_count_threshold():
    ctx = setup_context(shedder_settings(loadBalancerSheddingConditionHitCountThreshold=3))
    shedder = TransferShedder()
    hit = 0
    for i in range(3):
        r = shedder.find_bundles_for_unloading(ctx.input(), hit)
        assert r.decisions == () and r.skip == (Label.SKIP, Reason.HIT_COUNT)
        assert r.hit_count == i + 1
        assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)
        hit = r.hit_count
    r = shedder.find_bundles_for_unloading(ctx.input(), hit)
    assert unloads_key(r.decisions) == {dec("broker5:8080", E1, "broker1:8080"),
                                        dec("broker4:8080", D1, "broker2:8080")}
    assert r.hit_count == 0  # reset after a cycle that decided


def test_remaining_top_bundles():
    ctx = setup_context()
    ctx.push_tops("broker5:8080", "my-tenant/my-namespaceE", 2_000_000, 3_000_000)
    r = run(ctx)
    assert unloads_key(r.decisions) == {dec("broker5:8080", E1, "broker1:8080"),
                                        dec("broker4:8080", D1, "broker2:8080")}
    assert (r.avg, r.std) == (SETUP_AVG, SETUP_STD)


def test_load_more_than_100():
    ctx = setup_context()
    ctx.push_load("broker4:8080", 200)
    ctx.push_load("broker5:8080", 1000)
    r = run(ctx)
    assert unloads_key(r.decisions) == {dec("broker5:8080", E1, "broker1:8080"),
                                        dec("broker4:8080", D1, "broker2:8080")}
    assert r.avg == 2.4240000000000004
    assert r.std == 3.8633332758124816
    assert r.final_std == 2.781643776903451


def _random_context(rng: random.Random, size: int) -> Ctx:
    names = [f"broker{i}:8080" for i in range(size)]
    ctx = Ctx(available=names)
    for i, b in enumerate(names):
        load = rng.randrange(1000)
        bundle_load = rng.randrange(load + 1)
        ctx.push_tops(b, f"my-tenant/my-namespace{i}", bundle_load, load - bundle_load)
        ctx.push_load(b, load)
    return ctx


def test_random_load():
    rng = random.Random(7)
    for _ in range(5):
        ctx = _random_context(rng, 10)
        r = run(ctx)
        target = float(ctx.settings["loadBalancerBrokerLoadTargetStd"])
        # Java: std <= target || !hasTransferableBrokers()
        assert r.final_std <= target or text(r.stop).startswith(("no broker pair", "loadBalancerMax"))


def test_overload_outlier():
    names = [f"broker{i}:8080" for i in range(100)]
    ctx = Ctx(available=names)
    for i, b in enumerate(names[:-1]):
        ctx.push_tops(b, f"my-tenant/my-namespace{i}", 300_000, 700_000)
        ctx.push_load(b, 1)
    ctx.push_tops(names[-1], "my-tenant/my-namespace99", 30_000_000, 70_000_000)
    ctx.push_load(names[-1], 100)
    r = run(ctx)
    got = unloads_key(r.decisions)
    assert len(got) == 1
    (src, bundle, dst, label, reason), = got
    assert (src, bundle, label, reason) == (
        "broker99:8080", "my-tenant/my-namespace99/0x00000000_0x0FFFFFFF", "Success", "Underloaded")
    assert dst in ("broker52:8080", "broker83:8080")  # Java accepts either (hash order)
    assert r.avg == pytest.approx(0.019900000000000008, abs=1e-5)
    assert r.std == pytest.approx(0.09850375627355534, abs=1e-5)


def test_underload_outlier():
    names = [f"broker{i}:8080" for i in range(100)]
    ctx = Ctx(available=names)
    for i, b in enumerate(names[:98]):
        ctx.push_tops(b, f"my-tenant/my-namespace{i}", 30_000_000, 70_000_000)
        ctx.push_load(b, 98)
    ctx.push_tops(names[98], "my-tenant/my-namespace98", 30_000_000, 70_000_000)
    ctx.push_load(names[98], 99)
    ctx.push_tops(names[99], "my-tenant/my-namespace99", 300_000, 700_000)
    ctx.push_load(names[99], 1)
    r = run(ctx)
    assert unloads_key(r.decisions) == {dec(
        "broker98:8080", "my-tenant/my-namespace98/0x00000000_0x0FFFFFFF", "broker99:8080",
        "Underloaded")}
    assert r.avg == pytest.approx(0.9704000000000005, abs=1e-5)
    assert r.std == pytest.approx(0.09652895938523735, abs=1e-5)


def test_random_load_stats():
    """``testRandomLoadStats``: avg/std follow the offload arithmetic, round after round."""
    from lbctl.strategies.shedding.transfer import _Stats

    rng = random.Random(11)
    for _ in range(5):
        ctx = _random_context(rng, 10)
        loads = sorted(d.weightedMaxEMA for d in ctx.loads.values())
        st = _Stats()
        st.sorted = sorted(store(ctx.loads).items(), key=lambda e: e[1].weightedMaxEMA)
        st.max_idx, st.max_shed = len(st.sorted) - 1, 3
        total = sum(d.weightedMaxEMA for d in store(ctx.loads).values())
        st.set(total, sum(d.weightedMaxEMA ** 2 for d in store(ctx.loads).values()), 10)
        i, j = 0, len(loads) - 1
        for _k in range(3):
            mn, mx = loads[i], loads[j]
            off = (mx - mn) / 2
            assert ctx.loads[st.peek_min()].weightedMaxEMA == mn
            assert ctx.loads[st.peek_max()].weightedMaxEMA == mx
            st.max_idx -= 1
            assert st.avg == pytest.approx(statistics.fmean(loads), abs=1e-4)
            assert st.std == pytest.approx(statistics.pstdev(loads), abs=1e-4)
            st.offload(mx, mn, off)
            loads[i], loads[j] = mn + off, mx - off
            i, j = i + 1, j - 1


def _stats_of(loads):
    from lbctl.strategies.shedding.transfer import _Run

    names = [f"broker{i}:8080" for i in range(len(loads))]
    ctx = Ctx(available=names)
    for b, load in zip(names, loads, strict=True):
        ctx.push_load(b, load)
    run_ = _Run(ctx.input(), 0)
    run_.stats.sorted = sorted(run_.ctx.store.items(), key=lambda e: e[1].weightedMaxEMA)
    assert run_.load_stats() is None
    return run_.stats


def test_high_variance_load_stats():
    st = _stats_of([1] + [100] * 16)
    assert st.avg == 0.9417647058823528
    assert st.std == 0.23294117647058868


def test_low_variance_load_stats():
    st = _stats_of(list(range(390, 400)))
    assert st.avg == 3.9449999999999994
    assert st.std == 0.028722813232795824


def test_worked_example_rounds():
    """Reference §2.8: round by round, max → min, with the std after each."""
    r = run(setup_context())
    assert [(x.max_broker, x.min_broker, x.outcome) for x in r.rounds] == [
        ("broker5:8080", "broker1:8080", "offloaded"), ("broker4:8080", "broker2:8080", "offloaded")]
    assert r.rounds[0].std_after == pytest.approx(0.32284, abs=1e-5)
    assert r.rounds[1].std_after == pytest.approx(0.24377, abs=1e-5)
    assert text(r.stop).startswith("no broker pair")
