"""Words of the split strategies: the modular ``BundleSplitterTask``
(:mod:`lbctl.strategies.split.bundle_splitter_task`) and the extensible
``DefaultNamespaceBundleSplitStrategyImpl``
(:mod:`lbctl.strategies.split.default_namespace_bundle_split_strategy`)."""

from __future__ import annotations

from lbctl.explain.words.base import text, words
from lbctl.model.bundle import format_position
from lbctl.model.decision import Reason, SplitCandidate, SplitFigures
from lbctl.strategies.split.base import MB
from lbctl.strategies.split.bundle_splitter_task import SplitterWhy
from lbctl.strategies.split.default_namespace_bundle_split_strategy import CheckWhy
from lbctl.units import whole


def split_detail(c: SplitCandidate | SplitFigures) -> str:
    """The figure that fired the reason against its limit, as ``BundleSplitterTask`` and
    ``DefaultNamespaceBundleSplitStrategyImpl`` log it ("Message Rate: 49976/30000 msg/s"), for
    a modular candidate or an extensible decision alike; ``plan@1``'s ``detail`` of a split
    action."""
    match c.reason:
        case Reason.TOPICS:
            return f"Topics: {c.topics}/{c.limit}"
        case Reason.SESSIONS:
            return f"Sessions: ({c.producers}+{c.consumers})/{c.limit}"
        case Reason.MSG_RATE:
            return f"Message Rate: {whole(c.msg_rate)}/{c.limit} msg/s"
    return f"Message Throughput: {whole(c.throughput / MB)}/{c.limit} MB/s"


#: the setting whose limit each split reason exceeded (``BundleSplitterTask``'s thresholds, the
#: same in ``DefaultNamespaceBundleSplitStrategyImpl``)
SPLIT_SETTINGS = {
    Reason.TOPICS: "loadBalancerNamespaceBundleMaxTopics",
    Reason.SESSIONS: "loadBalancerNamespaceBundleMaxSessions",
    Reason.MSG_RATE: "loadBalancerNamespaceBundleMaxMsgRate",
    Reason.BANDWIDTH: "loadBalancerNamespaceBundleMaxBandwidthMbytes",
}


def split_threshold(c: SplitCandidate | SplitFigures) -> tuple[str, float]:
    """The setting the candidate (or extensible decision) exceeded and its figure in the setting's unit (topics,
    producers + consumers, msg/s, MB/s), for ``explain``'s splits next to ``c.limit``."""
    match c.reason:
        case Reason.TOPICS:
            value: float = c.topics
        case Reason.SESSIONS:
            value = c.producers + c.consumers
        case Reason.MSG_RATE:
            value = c.msg_rate
        case _:
            value = c.throughput / MB
    return SPLIT_SETTINGS.get(c.reason, SPLIT_SETTINGS[Reason.BANDWIDTH]), value


@words.register
def splitter(w: SplitterWhy) -> str:
    match w.code:
        case "namespace-full":
            return (f"namespace {w.namespace} has {w.count} bundles (+{w.picked} picked this "
                    f"cycle): loadBalancerNamespaceMaximumBundles is {w.maximum}")


@words.register
def check(w: CheckWhy) -> str:
    match w.code:
        case "few-topics":
            return "fewer than 2 topics"
        case "not-owner":
            return f"{w.broker} is not the owner"
        case "invalid-range":
            return f"invalid bundle range {w.detail}: cannot split"
        case "waiting":
            return (f"hit count {w.hits} <= loadBalancerNamespaceBundleSplitConditionHitCountThreshold"
                    f" {w.threshold}" + (f" ({w.reason} over its limit)" if w.reason else
                                         " (under every limit)"))
        case "count-failed":
            return f"bundle count lookup failed: {w.detail}"
        case "namespace-full":
            return (f"namespace {w.namespace} has {w.count} bundles, "
                    f"loadBalancerNamespaceMaximumBundles is {w.maximum}")
        case "parent-splitting":
            return f"{w.detail} is being split"
        case "needs-topics":
            return (f"split algorithm {w.algorithm} needs the bundle's topics, which were not "
                    "given (Failure/Unknown)")
        case "algorithm-failed":
            return (f"{w.algorithm} failed to compute the split boundaries (Failure/Unknown): "
                    f"{w.detail}")
        case "not-one-boundary":
            got = ("no boundary" if not w.boundaries else
                   f"{len(w.boundaries)} boundaries "
                   f"({', '.join(format_position(b) for b in w.boundaries)})")
            inner = text(w.inner)
            return (f"{w.algorithm} gave {got}; the split strategy needs exactly one "
                    "(Failure/Unknown)" + (f": {inner}" if inner else ""))
        case "split":
            return f"split: {w.reason} over its limit for {w.hits} cycles (> {w.threshold})"
