"""``explain``'s account of the Pulsar release modelled, short by default (walk18).

An operator reads an explanation for the decision; the release's profile (:mod:`lbctl.versions`)
used to come first, every way the release differs from the newest — up to forty lines on a 4.0.x
snapshot — most of them about code the cycle never ran (AvgShedder's sort on a ThresholdShedder
cluster). So the explanation now states the decision first, and the profile after it says:

* the settings whose values differ from the release's own defaults (where each came from), since
  those are the operator's choices;
* the variants that **bore on this cycle** (:func:`bearing`): the release's behaviour in code the
  cycle ran, with settings that make it matter;
* how many other variants there are, and that ``--profile`` lists every one (the former text).

Values are written as Pulsar's ``broker.conf`` spells them (:func:`java`): ``true``/``false``,
lists comma-separated, not Python's ``True`` or tuples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lbctl.config import SETTINGS, Settings
from lbctl.model.bundle import namespace_of
from lbctl.model.cycle import ExtensibleCycle, ModularCycle
from lbctl.versions import DEFAULT, Variant, profile_for

Cycle = ModularCycle | ExtensibleCycle

#: ``ModularLoadManagerImpl``'s shedders and placements (``LoadSheddingStrategy`` /
#: ``ModularLoadManagerStrategy`` implementations in org.apache.pulsar.broker.loadbalance.impl)
MODULAR_SHEDDERS = frozenset({"OverloadShedder", "ThresholdShedder", "UniformLoadShedder",
                              "AvgShedder"})


def java(value: Any) -> str:
    """A value as ``broker.conf`` writes it: Java's ``true``/``false``, a list comma-separated."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list, frozenset, set)):
        return ",".join(java(v) for v in value)
    return str(value)


def _short(name: object) -> str:
    return str(name).rsplit(".", 1)[-1]


def _strategies(c: Cycle) -> set[str]:
    """The shedding and placement strategies the cycle ran and the ones configured (a fallback
    ran another: the configured name is what a variant about it concerns)."""
    s = c.settings
    return {c.shedding, c.placement, _short(s.peek("loadBalancerLoadSheddingStrategy")),
            _short(s.peek("loadBalancerLoadPlacementStrategy"))}


def _from_default(s: Settings, key: str) -> bool:
    return s.origin(key) == "default"


def _unload_brokers(c: Cycle) -> int:
    if isinstance(c, ModularCycle):
        return len({o.selection.broker for o in c.unloads})
    return 0


def _lower_boundary(c: Cycle) -> bool:
    return "ThresholdShedder" in _strategies(c) and bool(c.settings.peek(
        "lowerBoundarySheddingEnabled"))


def _avg_shedder(c: Cycle) -> bool:
    return "AvgShedder" in _strategies(c)


def _not_modular_shedder(c: Cycle) -> bool:
    return (isinstance(c, ModularCycle)
            and _short(c.settings.peek("loadBalancerLoadSheddingStrategy")) not in MODULAR_SHEDDERS)


def _excluded_namespaces(c: Cycle) -> bool:
    # the release may not know the key (then Settings drops it): what the cluster wrote counts
    raw = c.state.config.get("loadBalancerSheddingExcludedNamespaces")
    return bool(raw) or bool(c.settings.peek("loadBalancerSheddingExcludedNamespaces"))


def _system_bundles(c: Cycle) -> bool:
    return isinstance(c, ModularCycle) and any(
        namespace_of(b) == "pulsar/system" for b in c.load.bundle_data)


def _select_candidates(c: Cycle) -> bool:
    """Whether ``ExtensibleLoadManagerImpl.selectAsync`` ran with a choice: some unload's
    placement preview (the next lookup's pick) had more than one candidate. Only then does the
    copied map's iteration order (``selectCandidateMap``: a ``HashMap`` in 3.0.0, a
    ``ConcurrentHashMap`` from 3.0.1, PR #20666) reach LeastResourceUsageWithWeight's sum and
    its random pick among the best; with one candidate or none, either map gives the same."""
    return isinstance(c, ExtensibleCycle) and any(
        a.preview is not None and len(a.preview.candidates) > 1 for a in c.actions)


def _split(c: Cycle) -> bool:
    return bool(c.settings.peek("loadBalancerAutoBundleSplitEnabled"))


#: variant → whether it bore on the cycle: the code it concerns ran (the strategy, the load
#: manager, a policy or namespace present) and, where a setting decides, the setting makes the
#: two behaviours differ. A variant not named here is always shown.
BEARING: dict[str, Callable[[Cycle], bool]] = {
    "memoryWeightDefault": lambda c: _from_default(c.settings, "loadBalancerMemoryResourceWeight"),
    "directMemoryWeightDefault": lambda c: _from_default(
        c.settings, "loadBalancerDirectMemoryResourceWeight"),
    "bandwidthKeys": lambda c: any(not _from_default(c.settings, k) for k in (
        "loadBalancerBandwidthInResourceWeight", "loadBalancerBandwidthOutResourceWeight",
        "loadBalancerBandwithInResourceWeight", "loadBalancerBandwithOutResourceWeight")),
    "weightedUsageWithMemory": lambda c: bool(
        {"ThresholdShedder", "LeastResourceUsageWithWeight"} & _strategies(c)),
    "overloadUsage": lambda c: isinstance(c, ModularCycle) and (
        bool({"OverloadShedder", "LeastLongTermMessageRate"} & _strategies(c))
        or bool(c.unloads)),
    "shedPulsarSystem": _system_bundles,
    "sheddingExcludedNamespaces": _excluded_namespaces,
    "lowerBoundaryShedding": _lower_boundary,
    "thresholdLowerBoundaryAverage": _lower_boundary,
    "avgShedder": _avg_shedder,
    "avgShedderScoreOrder": _avg_shedder,
    "avgShedderBundleMap": _avg_shedder,
    "avgShedderBindKey": _avg_shedder,
    "sheddingStrategyFailFast": _not_modular_shedder,
    "loadManagerFallback": lambda c: _not_modular_shedder(c) or _avg_shedder(c),
    "isolationBrokerHost": lambda c: bool(c.state.cluster_policies().isolation),
    "namespacePoliciesUnloadCheck": lambda c: isinstance(c, ModularCycle) and bool(
        c.unloads) and bool(c.state.cluster_policies().isolation),
    "extensible": lambda c: isinstance(c, ExtensibleCycle) or "TransferShedder" in _strategies(c),
    "selectCandidateMap": _select_candidates,
    "transferUnderloadedRule": lambda c: isinstance(c, ExtensibleCycle),
    "transferSkipsZeroThroughput": lambda c: isinstance(c, ExtensibleCycle),
    "topKSkipsZeroThroughput": lambda c: isinstance(c, ExtensibleCycle),
    "topKComparator": lambda c: isinstance(c, ExtensibleCycle),
    "splitNeedsTwoBrokers": lambda c: (isinstance(c, ModularCycle) and _split(c)
                                       and len(c.state.available()) <= 1),
    "flowOrQps": lambda c: _split(c) and c.settings.peek(
        "defaultNamespaceBundleSplitAlgorithm") == "flow_or_qps_equally_divide",
    "guavaMultimapBuckets": lambda c: _unload_brokers(c) >= 2,
}


def bearing(c: Cycle, variant: Variant) -> bool:
    """Whether ``variant`` bore on the cycle (:data:`BEARING`; unknown: yes, shown)."""
    test = BEARING.get(variant.name)
    return True if test is None else bool(test(c))


def changed_settings(s: Settings) -> list[str]:
    """``key = value (origin)`` for each setting whose value is not the release's default."""
    defaults = Settings.defaults(s.profile)
    return [f"{x.name} = {java(s.peek(x.name))} ({s.origin(x.name)})" for x in SETTINGS
            if s.peek(x.name) != defaults.peek(x.name)]


def variant_line(variant: Variant, value: Any) -> str:
    return f"  {variant.name} = {java(value)}: {variant.what} [{variant.source}]"


def profile_lines(c: Cycle, full: bool = False) -> list[str]:
    """The release modelled; the settings unlike its defaults; the variants that bore on the
    cycle (``full``: every way the release differs from the newest, ``explain --profile``)."""
    p = c.settings.profile
    lines = [f"Pulsar profile: {p.name}"]
    if p.warning:
        lines.append(f"  {p.warning}")
    changed = changed_settings(c.settings)
    lines.append(f"  settings other than Pulsar {p.version}'s defaults: "
                 + ("; ".join(changed) if changed else "none"))
    diffs = p.differences()
    shown = diffs if full else [(v, x) for v, x in diffs if bearing(c, v)]
    lines += [variant_line(v, x) for v, x in shown]
    hidden = len(diffs) - len(shown)
    if hidden:
        newest = profile_for(DEFAULT).version
        lines.append(f"  {hidden} other way(s) Pulsar {p.version} differs from {newest} did not "
                     "bear on this cycle (--profile lists them)")
    return lines
