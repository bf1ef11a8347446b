"""``extensions.strategy.DefaultNamespaceBundleSplitStrategyImpl``: which hot bundles to split.

Every broker runs it over its own bundles each ``loadBalancerSplitIntervalMinutes``: a bundle with
at least 2 topics that exceeds a limit — topics (``loadBalancerNamespaceBundleMaxTopics``), else
sessions (``…MaxSessions``, when > 0), else message rate (``…MaxMsgRate``), else throughput
(``…MaxBandwidthMbytes`` MiB/s) — raises its hit count; a bundle below every limit loses it. It
splits once the count exceeds ``loadBalancerNamespaceBundleSplitConditionHitCountThreshold``,
unless its namespace already has ``loadBalancerNamespaceMaximumBundles`` (counting this cycle's
splits) or a bundle of the namespace sharing its lower or upper bound is mid-split; at most
``loadBalancerMaxNumberOfBundlesToSplitPerCycle`` per cycle (later bundles are not evaluated, so
their counts do not advance). The children stay on the broker.

The hit counts are the strategy's memory across cycles. The boundary comes from the broker's
``defaultNamespaceBundleSplitAlgorithm`` (``NamespaceService.getSplitBoundary(bundle, null,
algorithm)``), computed by the caller's ``boundaries(bundle)``: every algorithm works, with
Pulsar's rules around it — an algorithm that fails (``specified_positions_divide`` without
positions, ``flow_or_qps_equally_divide`` when it is not the default), answers no boundary
(``null``) or more than one (``flow_or_qps_equally_divide`` cutting a bundle in three or more;
"The size of split boundaries is not 1") is a Failure/Unknown decision, and the bundle keeps its
hit count. Without ``boundaries`` only ``range_equally_divide`` (it reads no topic) is computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from msgspec import Struct, field

from lbctl.config import Settings
from lbctl.model.bundle import BundleRange, format_position
from lbctl.model.decision import BundleCheck, Label, Reason, SplitDecision, SplitResult
from lbctl.model.load import NamespaceBundleStats
from lbctl.strategies.split.base import SplitBoundaries, SplitError

MIB = 1024 * 1024


def _range_of(bundle: str) -> tuple[str, str]:
    ns, _, rng = bundle.rpartition("/")
    return ns, rng


def _parse_range(rng: str) -> BundleRange | None:
    try:
        lo, hi = rng.split("_")
        return BundleRange(int(lo, 16), int(hi, 16))
    except ValueError:
        return None


def split_reason(st: NamespaceBundleStats, settings: Settings) -> Reason | None:
    """Topics, then Sessions, then MsgRate, then Bandwidth — the first limit exceeded."""
    max_sessions = int(settings["loadBalancerNamespaceBundleMaxSessions"])
    if st.topics > int(settings["loadBalancerNamespaceBundleMaxTopics"]):
        return Reason.TOPICS
    if max_sessions > 0 and st.consumerCount + st.producerCount > max_sessions:
        return Reason.SESSIONS
    if st.msgRateIn + st.msgRateOut > int(settings["loadBalancerNamespaceBundleMaxMsgRate"]):
        return Reason.MSG_RATE
    if (st.msgThroughputIn + st.msgThroughputOut
            > int(settings["loadBalancerNamespaceBundleMaxBandwidthMbytes"]) * MIB):
        return Reason.BANDWIDTH
    return None


def find_bundles_to_split(
    broker: str,
    bundle_stats: Iterable[tuple[str, NamespaceBundleStats]],
    settings: Settings,
    hit_counts: Mapping[str, int],
    bundle_count: Callable[[str], int],
    is_owner: Callable[[str], bool] = lambda bundle: True,
    splitting: Mapping[str, str] | None = None,
    boundaries: Callable[[str], SplitBoundaries] | None = None,
) -> SplitResult:
    """``findBundlesToSplit`` for one broker. ``bundle_count(namespace)`` may raise (Failure);
    ``boundaries(bundle)`` is the default algorithm's answer (it may raise
    :class:`~lbctl.strategies.split.base.SplitError`: Failure)."""
    stats = list(bundle_stats)
    counts = {b: n for b, n in hit_counts.items() if b in dict(stats)}
    threshold = int(settings["loadBalancerNamespaceBundleSplitConditionHitCountThreshold"])
    max_bundles = int(settings["loadBalancerNamespaceMaximumBundles"])
    max_splits = int(settings["loadBalancerMaxNumberOfBundlesToSplitPerCycle"])
    algorithm = str(settings["defaultNamespaceBundleSplitAlgorithm"])
    decisions: list[SplitDecision] = []
    checks: list[BundleCheck] = []
    per_ns: dict[str, int] = {}
    failures = 0
    for bundle, st in stats:
        if st.topics < 2:
            checks.append(BundleCheck(bundle, counts.get(bundle, 0), "fewer than 2 topics"))
            continue
        if not is_owner(bundle):
            checks.append(BundleCheck(bundle, counts.get(bundle, 0), f"{broker} is not the owner"))
            continue
        ns, rng = _range_of(bundle)
        parsed = _parse_range(rng)
        if parsed is None or not parsed.can_split():
            failures += 1  # Failure/Unknown
            checks.append(BundleCheck(bundle, counts.get(bundle, 0),
                                      f"invalid bundle range {rng}: cannot split"))
            continue
        reason = split_reason(st, settings)
        if reason is not None:
            counts[bundle] = counts.get(bundle, 0) + 1
        else:
            counts.pop(bundle, None)
        hits = counts.get(bundle, 0)
        if hits <= threshold:
            why = (f"hit count {hits} <= loadBalancerNamespaceBundleSplitConditionHitCountThreshold"
                   f" {threshold}" + (f" ({reason} over its limit)" if reason else
                                      " (under every limit)"))
            checks.append(BundleCheck(bundle, hits, why))
            continue
        try:
            count = bundle_count(ns)
        except Exception as e:
            failures += 1
            checks.append(BundleCheck(bundle, hits, f"bundle count lookup failed: {e}"))
            continue
        if count + per_ns.get(ns, 0) >= max_bundles:
            checks.append(BundleCheck(bundle, hits, f"namespace {ns} has {count} bundles, "
                                      f"loadBalancerNamespaceMaximumBundles is {max_bundles}"))
            continue
        lo, hi = rng.split("_")
        parent_splitting = next(
            (b for b, r in (splitting or {}).items()
             if b.startswith(ns) and (r.startswith(lo) or r.endswith(hi))), None)
        if parent_splitting is not None:
            checks.append(BundleCheck(bundle, hits, f"{parent_splitting} is being split"))
            continue
        if boundaries is None and algorithm == "range_equally_divide":
            boundary = parsed.lower + (parsed.upper - parsed.lower) // 2
        elif boundaries is None:
            failures += 1
            checks.append(BundleCheck(bundle, hits, f"split algorithm {algorithm} needs the "
                                      "bundle's topics, which were not given (Failure/Unknown)"))
            continue
        else:
            try:
                answer = boundaries(bundle)
            except SplitError as e:
                failures += 1
                checks.append(BundleCheck(bundle, hits, f"{algorithm} failed to compute the split "
                                          f"boundaries (Failure/Unknown): {e}"))
                continue
            if answer.boundaries is None or len(answer.boundaries) != 1:
                failures += 1
                got = ("no boundary" if not answer.boundaries else
                       f"{len(answer.boundaries)} boundaries "
                       f"({', '.join(format_position(b) for b in answer.boundaries)})")
                checks.append(BundleCheck(bundle, hits, f"{algorithm} gave {got}; the split "
                                          "strategy needs exactly one (Failure/Unknown)"
                                          + (f": {answer.why}" if answer.why else "")))
                continue
            boundary = answer.boundaries[0]
        children = (f"{ns}/{format_position(parsed.lower)}_{format_position(boundary)}",
                    f"{ns}/{format_position(boundary)}_{format_position(parsed.upper)}")
        decisions.append(SplitDecision(bundle, broker, Label.SUCCESS, reason or Reason.UNKNOWN,
                                       boundary, children, algorithm))
        checks.append(BundleCheck(bundle, hits, f"split: {reason} over its limit for {hits} "
                                  f"cycles (> {threshold})"))
        per_ns[ns] = per_ns.get(ns, 0) + 1
        counts.pop(bundle, None)
        if len(decisions) == max_splits:
            break
    return SplitResult(tuple(decisions), failures, dict(counts), tuple(checks))


class SplitMemory(Struct, frozen=True):
    """Hit counts per broker (each broker runs its own strategy instance)."""

    hit_counts: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
