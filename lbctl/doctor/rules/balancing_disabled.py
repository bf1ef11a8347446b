"""``balancing-disabled``: shedding, automatic splits or the load balancer itself switched off.

``loadBalancerEnabled=false``: on the modular load manager the leader schedules no
``LoadSheddingTask`` and no resource-quota task, and no broker schedules its periodic
``LoadReportUpdaterTask`` (``PulsarService``: read once, at start and on election); bundle splits
still run, but only when a broker joins or leaves (``ModularLoadManagerImpl.updateAll`` →
``checkNamespaceBundleSplit``, which checks ``loadBalancerAutoBundleSplitEnabled`` and leadership,
not ``loadBalancerEnabled``), on the reports of that moment. The extensible manager's
``UnloadScheduler`` and ``SplitScheduler`` check it with their own key, so nothing is shed or split
there. ``loadBalancerSheddingEnabled=false`` makes the shedding task return before any strategy
runs (``ModularLoadManagerImpl.doLoadShedding``; ``UnloadScheduler``);
``loadBalancerAutoBundleSplitEnabled=false`` makes ``checkNamespaceBundleSplit`` (extensible:
``SplitScheduler``) return before any split. All but ``loadBalancerEnabled`` are dynamic
(``ServiceConfiguration``, ``@FieldContext(dynamic = true)``; ``update-dynamic-config`` refuses
``loadBalancerEnabled``, which only broker.conf and a restart change), so a drain or an incident
that turned one off via ``update-dynamic-config`` leaves it off across restarts until someone turns
it back on. ``loadBalancerAutoUnloadSplitBundlesEnabled=false`` keeps split children on the hot
broker (info). Read in apache/pulsar: ``ServiceConfiguration`` at 0023b937, ``ModularLoadManagerImpl``
at de5dc151, ``PulsarService``, ``UnloadScheduler`` and ``SplitScheduler``.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context

#: key → (severity, what stops)
KEYS = {
    "loadBalancerEnabled": (
        Severity.ERROR, "the leader never sheds and brokers stop their periodic load reports; "
                        "bundles are split only when a broker joins or leaves"),
    "loadBalancerSheddingEnabled": (Severity.WARNING, "no bundle is ever shed"),
    "loadBalancerAutoBundleSplitEnabled": (Severity.WARNING, "hot bundles are never split"),
    "loadBalancerAutoUnloadSplitBundlesEnabled": (
        Severity.INFO, "the halves of a split bundle stay on the broker that was hot"),
}


#: what ``loadBalancerEnabled=false`` stops on the extensible load manager (``UnloadScheduler``
#: and ``SplitScheduler`` check it besides their own key; its reporters keep running)
EXTENSIBLE_DISABLED = "the leader never sheds nor splits a bundle"


#: the keys ``lbctl drain --pause-balancer`` turns off (:mod:`lbctl.apply.balancer`)
DRAIN_PAUSES = ("loadBalancerSheddingEnabled", "loadBalancerAutoBundleSplitEnabled")


@rule("balancing-disabled", Severity.WARNING,
      title="Shedding, automatic splitting or the load balancer switched off",
      source="ServiceConfiguration (dynamic settings), ModularLoadManagerImpl.doLoadShedding",
      why="a dynamic setting turned off for a drain or an incident stays off in the metadata "
          "store across restarts, and the cluster silently stops rebalancing "
          "(ServiceConfiguration marks it dynamic; ModularLoadManagerImpl.doLoadShedding).",
      fix="`lbctl drain --restore --yes` when `lbctl drain --pause-balancer` left it off; else "
          "`pulsar-admin brokers update-dynamic-config --config loadBalancerSheddingEnabled "
          "--value true` (likewise the other key), or delete-dynamic-config")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    for key, (severity, effect) in KEYS.items():
        if ctx.value(key) is False:
            restore = ("`lbctl drain --restore --yes` if `lbctl drain --pause-balancer` left it off "
                       "(it puts back the values the journal recorded); else "
                       if key in DRAIN_PAUSES and ctx.stored(key) else "")
            if key == "loadBalancerEnabled" and ctx.extensible:
                effect = EXTENSIBLE_DISABLED
            yield r.finding(
                f"{ctx.shown(key)}: {effect}", severity=severity,
                fix=restore + ctx.set_fix(key, True)
                + (f" or `pulsar-admin brokers delete-dynamic-config --config {key}`"
                   if ctx.stored(key) else ""),
                settings=(key,))
