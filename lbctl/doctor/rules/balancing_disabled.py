"""``balancing-disabled``: shedding, automatic splits or the load balancer itself switched off.

``loadBalancerEnabled=false`` stops the leader's load-management tasks altogether;
``loadBalancerSheddingEnabled=false`` makes the shedding task return before any strategy runs
(``ModularLoadManagerImpl.doLoadShedding``; the extensible manager's ``UnloadScheduler`` checks
the same key); ``loadBalancerAutoBundleSplitEnabled=false`` stops ``BundleSplitterTask``. All but
``loadBalancerEnabled`` are dynamic (``ServiceConfiguration``, ``@FieldContext(dynamic = true)``), so a drain or an incident
that turned one off via ``update-dynamic-config`` leaves it off across restarts until someone turns
it back on. ``loadBalancerAutoUnloadSplitBundlesEnabled=false`` keeps split children on the hot
broker (info).
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context

#: key → (severity, what stops)
KEYS = {
    "loadBalancerEnabled": (Severity.ERROR, "the leader runs no load-management task at all"),
    "loadBalancerSheddingEnabled": (Severity.WARNING, "no bundle is ever shed"),
    "loadBalancerAutoBundleSplitEnabled": (Severity.WARNING, "hot bundles are never split"),
    "loadBalancerAutoUnloadSplitBundlesEnabled": (
        Severity.INFO, "the halves of a split bundle stay on the broker that was hot"),
}


#: the keys ``lbctl drain --pause-balancer`` turns off (:mod:`lbctl.apply.balancer`)
DRAIN_PAUSES = ("loadBalancerSheddingEnabled", "loadBalancerAutoBundleSplitEnabled")


@rule("balancing-disabled", Severity.WARNING,
      title="Shedding, automatic splitting or the load balancer switched off",
      source="ServiceConfiguration (dynamic settings), ModularLoadManagerImpl.doLoadShedding",
      why="a dynamic setting turned off for a drain or an incident stays off in the metadata "
          "store across restarts, and the cluster silently stops rebalancing "
          "(ServiceConfiguration marks it dynamic; ModularLoadManagerImpl.doLoadShedding).",
      fix="lbctl drain --restore --yes when lbctl drain --pause-balancer left it off; else "
          "pulsar-admin brokers update-dynamic-config --config loadBalancerSheddingEnabled "
          "--value true (likewise the other key), or delete-dynamic-config")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    for key, (severity, effect) in KEYS.items():
        if ctx.value(key) is False:
            restore = ("lbctl drain --restore --yes if lbctl drain --pause-balancer left it off "
                       "(it puts back the values the journal recorded); else "
                       if key in DRAIN_PAUSES and key in ctx.dynamic else "")
            yield r.finding(
                f"{ctx.shown(key)}: {effect}", severity=severity,
                fix=restore + ctx.set_fix(key, True)
                + (f" or pulsar-admin brokers delete-dynamic-config --config {key}"
                   if key in ctx.dynamic else ""),
                settings=(key,))
