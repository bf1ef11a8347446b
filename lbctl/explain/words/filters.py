"""Words of the modular load manager's broker filters (:mod:`lbctl.strategies.placement.filters`)
and of the extensible ones' transfer check (:mod:`lbctl.strategies.placement.broker_filters`)."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.strategies.placement.broker_filters import NotTransferableWhy
from lbctl.strategies.placement.filters import FilterWhy


def _problem(w: FilterWhy) -> str:
    """``BrokerFilterBadVersionException``'s message."""
    match w.problem:
        case "no-data":
            return f'No broker data for broker "{w.broker}"'
        case "no-version":
            return f'No version string in load report for broker "{w.broker}"'
        case "invalid":
            return f'Invalid version string in load report for broker "{w.broker}": "{w.detail}"'
    return "Unable to determine latest version since broker set was empty"


@words.register
def filtered(w: FilterWhy) -> str:
    match w.code:
        case "too-many-topics":
            return f"removed {', '.join(w.names)}: more than {w.limit} topics"
        case "all-too-many-topics":
            return f"every broker has more than {w.limit} topics: filter not applied"
        case "evenly":
            removed = [f"{b} ({n})" for b, n in zip(w.names, w.counts, strict=True)]
            return f"kept brokers owning {w.least} bundle(s) of {w.namespace}; removed " + ", ".join(
                removed)
        case "other-class":
            removed = [f"{b} ({c or 'no class'})" for b, c in zip(w.names, w.classes, strict=True)]
            return f"removed {', '.join(removed)}: not {w.detail}"
        case "no-versions":
            return "not applied: no load report carries brokerVersionString"
        case "version-failed":
            return f"failed ({_problem(w)}): candidates restored"
        case "older-version":
            v = w.newest
            assert v is not None
            return f"removed brokers older than the newest version {v.major}.{v.minor}.{v.patch}"


@words.register
def not_transferable(w: NotTransferableWhy) -> str:
    match w.code:
        case "policies":
            return ("its namespace has isolation or anti-affinity policies and "
                    "loadBalancerSheddingBundlesWithPoliciesEnabled is false")
        case "filter-failed":
            return f"broker filter failed ({w.detail})"
        case "excluded":
            return f"the broker filters exclude {w.detail}"
        case "no-other":
            return "no other broker passes the filters"
