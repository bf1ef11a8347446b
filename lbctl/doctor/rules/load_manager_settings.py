"""``load-manager-mismatch``: settings of one load manager on a cluster running the other.

* a modular cluster whose ``loadBalancerLoadSheddingStrategy`` names TransferShedder:
  ``ModularLoadManagerImpl.createLoadSheddingStrategy`` finds no ``LoadSheddingStrategy`` and
  sheds with OverloadShedder; from 4.0 it fails fast instead (PR #22827: ``Reflections.createInstance``,
  read at apache/pulsar 009a9bf2), ``initialize`` throws and ``LoadManager.create`` falls back to
  SimpleLoadManagerImpl (variant ``sheddingStrategyFailFast``) — error;
* an extensible cluster whose shedding strategy names a modular shedder: the extensible manager
  uses TransferShedder whatever it says — warning;
* settings only the other load manager reads, set away from their defaults: they do nothing —
  warning. The extensible-only settings are those ``ServiceConfiguration`` documents as "only
  used in load balancer extension"; the modular-only ones those that only the modular strategies
  declare reading (:data:`lbctl.strategies.builtin.SHEDDING` / ``PLACEMENT``).
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, listing, plain, short
from lbctl.strategies.builtin import PLACEMENT, SHEDDING

EXTENSIBLE_ONLY = (
    "loadBalancerDebugModeEnabled", "loadBalancerBrokerLoadTargetStd",
    "loadBalancerSheddingConditionHitCountThreshold", "loadBalancerTransferEnabled",
    "loadBalancerMaxNumberOfBrokerSheddingPerCycle", "loadBalanceSheddingDelayInSeconds",
    "loadBalancerBrokerLoadDataTTLInSeconds", "loadBalancerSheddingBundlesWithPoliciesEnabled",
    "loadBalancerSplitIntervalMinutes", "loadBalancerMaxNumberOfBundlesToSplitPerCycle",
    "loadBalancerNamespaceBundleSplitConditionHitCountThreshold",
)
_EXT_STRATEGIES = {"TransferShedder", "LeastResourceUsageWithWeight"}


def modular_only() -> tuple[str, ...]:
    """Settings read by a modular strategy and by no extensible one."""
    ext = {k for name in _EXT_STRATEGIES & set(SHEDDING.names()) for k in SHEDDING.reads(name)}
    # the extensible LeastResourceUsageWithWeight (extensions.strategy) reads these
    ext |= {"loadBalancerAverageResourceUsageDifferenceThresholdPercentage",
            "loadBalancerHistoryResourcePercentage"}
    mod = {k for name in SHEDDING.names() if name != "TransferShedder"
           for k in SHEDDING.reads(name)}
    mod |= {k for name in PLACEMENT.names() for k in PLACEMENT.reads(name)}
    mod |= {"loadBalancerLoadPlacementStrategy", "loadBalancerDistributeBundlesEvenlyEnabled"}
    return tuple(sorted(mod - ext - set(EXTENSIBLE_ONLY)))


@rule("load-manager-mismatch", Severity.WARNING,
      title="Settings of one load manager on a cluster running the other",
      source="PIP-192, ModularLoadManagerImpl.createLoadSheddingStrategy",
      why="each load manager reads its own settings: the other's do nothing, and a TransferShedder "
          "named on the modular manager makes it shed with OverloadShedder (from 4.0, PR #22827: "
          "fall back to SimpleLoadManagerImpl).",
      fix="set the strategies of the load manager in loadManagerClassName, or switch managers")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    shed_key = "loadBalancerLoadSheddingStrategy"
    shed = short(ctx.value(shed_key))
    if not ctx.extensible:
        if shed == "TransferShedder":
            yield r.finding(
                f"the modular load manager with {ctx.shown(shed_key)}",
                severity=Severity.ERROR,
                why=("TransferShedder is not a LoadSheddingStrategy: ModularLoadManagerImpl "
                     "fails to initialize (createLoadSheddingStrategy fails fast, PR #22827) "
                     + ("and the broker does not start (LoadManager.create fails fast too, "
                        "PR #26031); "
                        if ctx.profile["loadManagerFallback"] == "fail" else
                        "and Pulsar falls back to SimpleLoadManagerImpl (LoadManager.create); ")
                     + "PIP-220 strategies need the extensible manager (PIP-192)."
                     if ctx.profile["sheddingStrategyFailFast"] else
                     "TransferShedder is not a LoadSheddingStrategy: ModularLoadManagerImpl "
                     "sheds with OverloadShedder instead (createLoadSheddingStrategy; PIP-220 "
                     "strategies need the extensible manager, PIP-192)."),
                fix=f"{shed_key}=org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder (or "
                    "another modular shedder), or loadManagerClassName=org.apache.pulsar.broker."
                    "loadbalance.extensions.ExtensibleLoadManagerImpl",
                settings=(shed_key,))
        wrong = [k for k in EXTENSIBLE_ONLY if ctx.is_set(k)]
        if wrong:
            yield r.finding(
                "extensible-load-manager settings on a modular cluster: "
                + listing([f"{k}={plain(ctx.value(k))}" for k in wrong]),
                why="ServiceConfiguration documents them as used only by the extensible load "
                    "manager (PIP-192): ModularLoadManagerImpl never reads them.",
                fix="remove them, or move the cluster to ExtensibleLoadManagerImpl (compare "
                    "first: " + ctx.compare_fix("ThresholdShedder", "TransferShedder") + ")",
                settings=wrong)
        return
    if ctx.is_set(shed_key) and shed != "TransferShedder":
        yield r.finding(
            f"the extensible load manager with {ctx.shown(shed_key)}",
            why="the extensible load manager sheds with TransferShedder whatever the setting "
                "names (a modular LoadSheddingStrategy is not a NamespaceUnloadStrategy; PIP-192).",
            fix=f"{shed_key}=org.apache.pulsar.broker.loadbalance.extensions.scheduler."
                "TransferShedder", settings=(shed_key,))
    wrong = [k for k in modular_only() if ctx.is_set(k)]
    if wrong:
        yield r.finding(
            "modular-load-manager settings on an extensible cluster: "
            + listing([f"{k}={plain(ctx.value(k))}" for k in wrong]),
            why="only the modular load manager's strategies read them; the extensible one "
                "(PIP-192) balances with TransferShedder's own settings.",
            fix="tune the extensible manager's settings instead (loadBalancerBrokerLoadTargetStd, "
                "loadBalancerSheddingConditionHitCountThreshold, …), or remove them",
            settings=wrong)
