"""``distribute-evenly``: ``loadBalancerDistributeBundlesEvenlyEnabled`` leaving placement one
candidate.

Before the placement strategy looks at load, ``selectBroker`` keeps only the brokers owning the
fewest bundles of the bundle's namespace (``LoadManagerShared.removeMostServicingBrokersForNamespace``,
:func:`lbctl.strategies.placement.filters.remove_most_servicing`, after the max-topics filter).
When one broker alone owns the fewest, every bundle of that namespace the leader places goes to
it whatever its load (#8492); on a cluster shedding with ThresholdShedder this kept one cluster
unloading for 10 hours and 400 cycles until PR #16059 added the switch. Modular load manager only.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, is_system, listing
from lbctl.model.bundle import namespace_of
from lbctl.model.decision import FilterStep
from lbctl.strategies.placement.filters import remove_most_servicing


@rule("distribute-evenly", Severity.WARNING,
      title="loadBalancerDistributeBundlesEvenlyEnabled leaves placement a single candidate",
      source="#8492, PR #16059",
      why="with loadBalancerDistributeBundlesEvenlyEnabled placement only considers the brokers "
          "owning the fewest bundles of the namespace, so when one broker does, it gets every "
          "bundle placed whatever its load (#8492, PR #16059).",
      fix="loadBalancerDistributeBundlesEvenlyEnabled=false")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    key = "loadBalancerDistributeBundlesEvenlyEnabled"
    if ctx.extensible or not ctx.value(key) or len(ctx.brokers) < 2:
        return
    limit = int(ctx.value("loadBalancerBrokerMaxTopics"))
    everyone = tuple(ctx.brokers)
    cands = tuple(b for b in everyone if ctx.brokers[b].numTopics <= limit) or everyone
    index: dict[str, dict[str, int]] = {}
    for bundle, broker in ctx.owners.items():
        per = index.setdefault(namespace_of(bundle), {})
        per[broker] = per.get(broker, 0) + 1
    members = frozenset(cands)  # shared by every namespace: each costs its owners, not brokers
    single: list[str] = []
    targets: list[str] = []
    for ns in index:
        if is_system(ns):
            continue
        steps: list[FilterStep] = []
        kept = remove_most_servicing(cands, ns, index, steps, members)
        if len(kept) == 1:
            single.append(f"{ns} → {kept[0]}")
            targets.append(kept[0])
    if single:
        yield r.finding(
            f"{len(single)} namespace(s) of {len(index)} have one placement candidate on this "
            f"{len(everyone)}-broker cluster: {listing(single)}",
            fix=ctx.set_fix(key, False), namespaces=[s.split(" → ")[0] for s in single],
            brokers=sorted(set(targets)), settings=(key,))
