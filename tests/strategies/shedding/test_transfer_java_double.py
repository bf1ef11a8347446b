"""TransferShedder's double arithmetic where Java's and Python's differ: division by zero, and
``Math.max``/``Math.min`` with NaN and signed zeros (TransferShedder at 028ed6295a34:
``offloadThroughput`` divides by the max broker's load, the adjusted offload by its throughput,
``LoadStats.offload`` takes ``Math.max(0, max - offload)``, the underloaded multiplier
``Math.min(0.5, Math.max(0.0, targetStd / 2))``). A cycle that Java runs through with infinities
and NaNs must not end in a Python exception (Failure/Unknown, no unload); and a cycle that does
throw keeps the hit count it set, as Pulsar's ``unloadConditionHitCount`` does. The helpers are
checked against the JDK's own answers (``java/DoubleOps.java``, plain JDK)."""

from __future__ import annotations

import math
import struct
from pathlib import Path

from lbctl.model.decision import Label, Reason, unloads_key
from lbctl.model.load import NamespaceBundleStats
from lbctl.records import replace
from lbctl.strategies.shedding import transfer
from lbctl.strategies.shedding.transfer import ShedderInput, TransferShedder
from tests.ext_helpers import NOW, cpu_load, shedder_settings, store, top_bundles
from tests.jdk import java_double, needs_jdk, run_java
from tests.strategies.shedding.test_transfer import run, setup_context

JAVA = Path(__file__).parent / "java"
_VALUES = [0.0, -0.0, 1.0, -1.0, 2.5, -7e6, 1e-300, 1e300, math.inf, -math.inf, math.nan]


def _bits(x: float) -> str:
    """``Double.doubleToLongBits``: the one canonical NaN."""
    if math.isnan(x):
        return str(0x7FF8000000000000)
    return str(struct.unpack(">q", struct.pack(">d", x))[0])


@needs_jdk("TransferShedder's division and Math.max/min are not checked against the JDK")
def test_double_helpers_are_the_jdks(tmp_path: Path) -> None:
    pairs = [(a, b) for a in _VALUES for b in _VALUES]
    lines = [f"{i}\t{java_double(a)}\t{java_double(b)}" for i, (a, b) in enumerate(pairs)]
    java = run_java("DoubleOps", tmp_path, lines, where=JAVA)
    assert len(java) == len(pairs)
    ours = {str(i): [_bits(transfer._jdiv(a, b)), _bits(transfer._jmax(a, b)),
                     _bits(transfer._jmin(a, b))] for i, (a, b) in enumerate(pairs)}
    wrong = [pairs[int(i)] for i in java if java[i] != ours[i]]
    assert not wrong, f"{len(wrong)} pairs differ from the JDK, e.g. {wrong[:3]}"
    # teeth: Python's own max and min differ from Math.max/min on these pairs
    plain = sum(_bits(max(a, b)) != java[str(i)][1] or _bits(min(a, b)) != java[str(i)][2]
                for i, (a, b) in enumerate(pairs))
    assert plain > 10


def test_idle_brokers_with_a_lagging_throughput_ema_still_decide() -> None:
    """Every broker at 0 load; the hotter one's throughput EMA still shows traffic that its
    current throughput no longer does, while its top bundles carry some. The min broker is
    underloaded (its EMA under an eighth of the max broker's), so a round runs: the offload
    target is 0·0/0 = NaN in Java, no bundle overshoots it, the first moves, and the adjusted
    offload is 5e5·0/0 = NaN again. Java decides that one transfer; a Python division by zero
    made the cycle a Failure/Unknown with no decision."""
    settings = shedder_settings()
    tops = {"broker1:8080": top_bundles(settings, "my-tenant/my-namespaceA", 1e5, 2e5),
            "broker2:8080": top_bundles(settings, "my-tenant/my-namespaceB", 5e5, 7e5)}
    zero = cpu_load(settings, 0, None)
    loads = {"broker1:8080": replace(zero, msgThroughputIn=0.0, msgThroughputOut=0.0,
                                     msgThroughputEMA=0.0),
             "broker2:8080": replace(zero, msgThroughputIn=0.0, msgThroughputOut=0.0,
                                     msgThroughputEMA=1e6)}
    ordered = store(loads)
    assert list(ordered)[-1] == "broker2:8080"  # equal loads: the store's last is the max broker
    res = TransferShedder().find_bundles_for_unloading(
        ShedderInput(settings, NOW, ordered, store(tops), list(loads)), 0)
    assert res.skip is None
    assert unloads_key(res.decisions) == {
        ("broker2:8080", "my-tenant/my-namespaceB/0x00000000_0x0FFFFFFF", "broker1:8080",
         "Success", "Underloaded")}
    assert math.isnan(res.final_std)  # LoadStats.offload with a NaN offload: Math.max keeps it NaN


def test_a_throw_after_the_hit_count_gate_keeps_the_count() -> None:
    """A broker filter that throws outside its future (Pulsar catches only the future's
    InterruptedException/ExecutionException/TimeoutException in isTransferable) ends the cycle
    in the Throwable catch: Failure/Unknown and no decision, but the hit count already raised
    by the gate stays raised for the next cycle."""
    ctx = setup_context()

    def throwing(bundle: str, src: str, dst: str | None) -> tuple[bool, None]:
        raise RuntimeError("filter threw")

    res = run(ctx, hit=2, transferable=throwing)
    assert res.decisions == ()
    assert res.skip == (Label.FAILURE, Reason.UNKNOWN)
    assert res.hit_count == 3


def test_nan_bundle_throughput_is_not_idle() -> None:
    """NaN throughput is not 0: TopKBundles and TransferShedder's zero checks let it through."""
    settings = shedder_settings()
    st = NamespaceBundleStats(msgThroughputIn=math.nan)
    from lbctl.model.brokerload import top_k_bundles

    assert len(top_k_bundles([("t/n/0x00000000_0x0FFFFFFF", st)], 2, settings)) == 1


def test_long_overflow_of_the_ttl_and_the_delay() -> None:
    """``loadBalancerBrokerLoadDataTTLInSeconds`` and ``loadBalanceSheddingDelayInSeconds`` are
    ``long`` s multiplied by 1000 in ``long``: ``Long.MAX_VALUE`` seconds wraps to -1000 ms. As
    a TTL every broker's data is then older than it (Skip/OutDatedData); as a delay no broker
    is cooling down, even one unloaded a second ago."""
    biggest = 2**63 - 1
    assert (biggest * 1000 + 2**63) % 2**64 - 2**63 == -1000
    ctx = setup_context()
    res = run(ctx, settings=ctx.settings.with_values(
        loadBalancerBrokerLoadDataTTLInSeconds=biggest))
    assert res.skip == (Label.SKIP, Reason.OUTDATED_DATA) and res.decisions == ()

    just_now = {"broker1:8080": NOW - 1000}
    cooling = run(ctx, recently_brokers=just_now)
    assert cooling.skip == (Label.SKIP, Reason.COOL_DOWN)
    res = run(ctx, recently_brokers=just_now, settings=ctx.settings.with_values(
        loadBalanceSheddingDelayInSeconds=biggest))
    assert res.skip is None and len(res.decisions) == 2
    assert res.expired_brokers == ("broker1:8080",)  # removed from recentlyUnloadedBrokers




def test_no_python_exception_on_special_figures() -> None:
    """Random stores whose loads, throughputs and EMAs mix 0, -0.0, infinities, NaN and huge
    values: Java runs every such cycle to an answer (no arithmetic of TransferShedder throws), so
    lbctl's must never be a Failure/Unknown born of a Python exception."""
    from hypothesis import given, settings
    from hypothesis import strategies as hs

    special = hs.sampled_from([0.0, -0.0, 1.0, 0.5, 1e-300, 1e300, math.inf, -math.inf,
                               math.nan, 3e6])
    figure = hs.one_of(special, hs.floats(min_value=0.0, max_value=1e7))
    broker = hs.tuples(figure, figure, figure, hs.lists(figure, min_size=0, max_size=4))

    @settings(max_examples=300, deadline=None, derandomize=True)
    @given(hs.lists(broker, min_size=2, max_size=6), hs.sampled_from([-1.0, 0.0, 0.25, 1e300]))
    def check(brokers: list[tuple[float, float, float, list[float]]], target: float) -> None:
        conf = shedder_settings(loadBalancerBrokerLoadTargetStd=target)
        base = cpu_load(conf, 50, None)
        loads, tops = {}, {}
        for i, (load, tp, ema, bundles) in enumerate(brokers):
            name = f"broker{i}:8080"
            loads[name] = replace(base, weightedMaxEMA=load, msgThroughputOut=tp,
                                  msgThroughputIn=0.0, msgThroughputEMA=ema)
            tops[name] = tuple(
                transfer.TopBundle(f"t/ns{i}/0x{j:08x}_0x{j + 1:08x}",
                                   NamespaceBundleStats(msgThroughputOut=v))
                for j, v in enumerate(bundles))
        res = TransferShedder().find_bundles_for_unloading(
            ShedderInput(conf, NOW, store(loads), store(tops), list(loads)), 0)
        assert res.skip != (Label.FAILURE, Reason.UNKNOWN), res.why

    check()
