"""Words of the load managers' own steps around their strategies
(:class:`~lbctl.model.decision.CycleWhy`): an unload not carried out, the overload re-check of
``selectBroker``, the load manager's filter steps, an automatic split left alone."""

from __future__ import annotations

from lbctl.explain.words.base import text, words
from lbctl.model.decision import AdminSplit, AdminSplitWhy, Cycle, CycleWhy

C = Cycle

_FIXED = {
    C.OWNER_ONLY: "no broker other than the owner passes the namespace policies "
                  "(shouldNamespacePoliciesUnload)",
    C.WOULD_COME_BACK: "every candidate broker owns as many namespaces of its anti-affinity "
                       "group as the owner: it would come back "
                       "(shouldAntiAffinityNamespaceUnload)",
    C.NO_BROKER: "no broker available to take it",
    C.SAME_BROKER: "the destination broker is the current owner",
    C.STRATEGY_FOUND_NONE: "the placement strategy found no broker",
    C.RESTORED: "no candidate left: every broker the namespace policies allow",
}


@words.register
def cycle(w: CycleWhy) -> str:
    fixed = _FIXED.get(w.code)
    if fixed is not None:
        return fixed
    match w.code:
        case C.EXCLUDED_NAMESPACE:
            return f"namespace {w.detail} is in loadBalancerSheddingExcludedNamespaces"
        case C.OVERLOADED_PICK:
            return (f"{w.broker} is overloaded ({w.usage:.1%} > {w.threshold:.0%}); "
                    f"asked again over all brokers: {w.detail}")
        case C.NO_REPORT:
            return "removed " + ", ".join(w.names) + ": no load report to place by"
        case C.CANNOT_SPLIT:
            return f"range {w.detail} can't be split further"
        case C.NOT_A_BUNDLE:
            return f"{w.detail} is not one of the namespace's bundles any more"
        case C.NO_BOUNDARY:
            return f"{w.detail} found no split boundary: {text(w.inner)}"
        case C.BAD_NAME | C.SPLIT_REFUSED:
            return w.detail
    raise ValueError(f"no words for {w.code}")


@words.register
def admin_split(w: AdminSplitWhy) -> str:
    match w.code:
        case AdminSplit.LARGEST:
            return f"LARGEST: {w.count} of the namespace's {w.total} persistent topics"
        case AdminSplit.HOT:
            return (f"HOT: the highest long-term throughput of {w.namespace}, "
                    f"{w.throughput / 1048576:,.2f} MB/s")
        case AdminSplit.ASKED:
            return "-san"
        case AdminSplit.ASKED_UNKNOWN:
            return f"{w.asked!r} is unknown to the broker: its default {w.used}"
        case AdminSplit.DEFAULT:
            return "defaultNamespaceBundleSplitAlgorithm"
        case AdminSplit.DEFAULT_UNKNOWN:
            return f"defaultNamespaceBundleSplitAlgorithm {w.default!r} is unknown: {w.used}"
