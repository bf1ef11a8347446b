"""Words of ``SimpleLoadManagerImpl`` (:mod:`lbctl.strategies.simple.decide`)."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.strategies.simple.decide import SimpleWhy

_RESOURCE = {"CPU": "CPU", "Memory": "JVM heap", "BandwidthIn": "bandwidth in",
             "BandwidthOut": "bandwidth out"}


def _pct(x: float) -> str:
    return f"{x:.1f}%"


@words.register
def simple(w: SimpleWhy) -> str:
    res = _RESOURCE.get(w.resource, w.resource)
    match w.code:
        case "fine":
            return (f"no resource above loadBalancerBrokerOverloadedThresholdPercentage "
                    f"{w.threshold:g}% (highest of CPU, direct memory, bandwidth: "
                    f"{_pct(w.percent)})")
        case "overloaded":
            first, *roomy = w.names
            return (f"{_pct(w.percent)} > loadBalancerBrokerOverloadedThresholdPercentage "
                    f"{w.threshold:g}%; bottleneck {res}: of its {w.count} bundles the heaviest on "
                    f"{res} is {first}, and {', '.join(roomy)} "
                    f"{'is' if len(roomy) == 1 else 'are'} below "
                    "loadBalancerBrokerComfortLoadLevelPercentage on every resource: unload it")
        case "no-room":
            return (f"overloaded (bottleneck {res}), but no candidate broker of "
                    f"{w.names[0]}'s namespace is below loadBalancerBrokerComfortLoadLevelPercentage "
                    f"{w.threshold:g}% on CPU, direct memory and bandwidth: nothing unloaded")
        case "sole-bundle":
            return (f"overloaded (bottleneck {res}, {_pct(w.percent)}) by its sole bundle "
                    f"{w.names[0]}: SimpleLoadManagerImpl does not shed it")
        case "no-bundles":
            return f"overloaded (bottleneck {res}, {_pct(w.percent)}) without bundle stats"
        case "least-loaded":
            return (f"{w.broker} is the least loaded candidate (estimated load "
                    f"{_pct(w.percent)}, ResourceUnitRanking.compareTo's 5-point bands)")
        case "idle":
            if not w.broker:
                return "no candidate ranked"
            return (f"{w.broker} is idle and the least loaded busy candidate is at "
                    f"{_pct(w.percent)} > loadBalancerBrokerUnderloadedThresholdPercentage "
                    f"{w.threshold:g}% (or none is busy)")
        case "random":
            return (f"every candidate is full ({_pct(w.percent)}): {w.broker} is the rotating "
                    "pick")
        case "max-available":
            return (f"the least loaded candidate is at {_pct(w.percent)} > "
                    f"loadBalancerBrokerOverloadedThresholdPercentage {w.threshold:g}%: "
                    f"{w.broker} has the most room left ({w.count} bundles)")
        case "weighted-random":
            return (f"{w.broker or 'no broker'} drawn at random, weighted by rank "
                    f"(weightedRandomSelection, ranks summing to {w.count})")
        case "preallocated":
            return f"the bundle is preallocated to {w.broker} already"
        case "no-candidate":
            return "no active candidate broker for the bundle"
        case "grace":
            return ("unloaded less than loadBalancerSheddingGracePeriodMinutes ago "
                    "(unloadedHotNamespaceCache)")
        case "dry-run":
            return ("loadBalancerSheddingEnabled is false: SimpleLoadManagerImpl only logs the "
                    "unload (DRY RUN)")
        case "split-away":
            return (f"{w.broker} split this bundle after writing its load report "
                    "(doNamespaceBundleSplit): the unload of a bundle that no longer exists "
                    "fails, and it is not remembered in unloadedHotNamespaceCache")
