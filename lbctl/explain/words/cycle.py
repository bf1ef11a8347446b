"""Words of the load managers' own steps around their strategies
(:class:`~lbctl.model.decision.CycleWhy`): an unload not carried out, the overload re-check of
``selectBroker``, the load manager's filter steps, an automatic split left alone."""

from __future__ import annotations

from lbctl.explain.words.base import text, words
from lbctl.model.decision import AdminSplitWhy, CycleWhy

_FIXED = {
    "owner-only": "no broker other than the owner passes the namespace policies "
                  "(shouldNamespacePoliciesUnload)",
    "would-come-back": "every candidate broker owns as many namespaces of its anti-affinity "
                       "group as the owner: it would come back "
                       "(shouldAntiAffinityNamespaceUnload)",
    "no-broker": "no broker available to take it",
    "same-broker": "the destination broker is the current owner",
    "strategy-found-none": "the placement strategy found no broker",
    "restored": "no candidate left: every broker the namespace policies allow",
}


@words.register
def cycle(w: CycleWhy) -> str:
    fixed = _FIXED.get(w.code)
    if fixed is not None:
        return fixed
    match w.code:
        case "excluded-namespace":
            return f"namespace {w.detail} is in loadBalancerSheddingExcludedNamespaces"
        case "overloaded-pick":
            return (f"{w.broker} is overloaded ({w.usage:.1%} > {w.threshold:.0%}); "
                    f"asked again over all brokers: {w.detail}")
        case "no-report":
            return "removed " + ", ".join(w.names) + ": no load report to place by"
        case "cannot-split":
            return f"range {w.detail} can't be split further"
        case "not-a-bundle":
            return f"{w.detail} is not one of the namespace's bundles any more"
        case "no-boundary":
            return f"{w.detail} found no split boundary: {text(w.inner)}"
        case "bad-name" | "split-refused":
            return w.detail
    raise ValueError(f"no words for {w.code}")


@words.register
def admin_split(w: AdminSplitWhy) -> str:
    match w.code:
        case "largest":
            return f"LARGEST: {w.count} of the namespace's {w.total} persistent topics"
        case "hot":
            return (f"HOT: the highest long-term throughput of {w.namespace}, "
                    f"{w.throughput / 1048576:,.2f} MB/s")
        case "asked":
            return "-san"
        case "asked-unknown":
            return f"{w.asked!r} is unknown to the broker: its default {w.used}"
        case "default":
            return "defaultNamespaceBundleSplitAlgorithm"
        case "default-unknown":
            return f"defaultNamespaceBundleSplitAlgorithm {w.default!r} is unknown: {w.used}"
