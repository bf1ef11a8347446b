"""What a cycle knew of the placement data beside load (the snapshot's ``policies`` and
``availableBrokers``), in words, for both load managers' explanations. Said only when the snapshot
captured it: a snapshot without these sections explains as before."""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.model.cluster import ClusterState
from lbctl.model.policies import HostRule, broker_host, full_match


def placement_data_lines(state: ClusterState, settings: Settings | None = None) -> list[str]:
    """One line on the policies in force, one on active brokers without a load report, one when
    ``preferLaterVersions`` is on but no broker's version was captured (the version filter is then
    not applied rather than failing every broker)."""
    out = []
    p = state.policies
    if p is not None:
        parts = []
        if p.isolation:
            parts.append(f"{len(p.isolation)} isolation polic{'y' if len(p.isolation) == 1 else 'ies'}"
                         f" ({', '.join(x.name or '?' for x in p.isolation)})")
        groups = sorted({g for ns in p.anti_affinity
                         if (g := p.anti_affinity_group(ns)) is not None})
        if groups:
            parts.append(f"anti-affinity groups {', '.join(groups)} "
                         f"({len(p.anti_affinity)} namespaces)")
        if p.failure_domains:
            parts.append(f"{len(p.failure_domains)} failure domain(s)")
        out.append("Namespace policies: " + ("; ".join(parts) if parts else "none defined"))
        out += _id_only_policies(state, settings)
    if (settings is not None and settings.peek("preferLaterVersions")
            and not any(local.brokerVersionString for local in state.brokers.values())):
        out.append("BrokerVersionFilter not applied: preferLaterVersions is on but no broker's "
                   "version was captured")
    missing = [b for b in state.available() if b not in state.brokers]
    if missing:
        out.append(f"Active without a load report: {', '.join(missing)} — never a destination "
                   "unless an isolation policy names it")
    return out


def _id_only_policies(state: ClusterState, settings: Settings | None) -> list[str]:
    """A line per isolation policy whose broker regexes match some broker's ``host:port`` id but
    none of the hosts Pulsar matches them against (``LoadManagerShared.applyNamespacePolicies``):
    the policy has no broker (Pulsar issue #15795). And one naming the brokers whose id gives no
    host at all (no ``:``, ``parseBrokerHost``): every policy check skips them — those a policy
    names are not named "by host:port", their ids have no port."""
    p = state.policies
    if p is None:
        return []
    rule: HostRule = (settings.profile["isolationBrokerHost"] if settings is not None
                      else "brokerId")
    ids = state.available()
    host_of = {b: broker_host(b, rule) for b in ids}
    hosts = [h for h in host_of.values() if h is not None]
    out = []
    for policy in p.isolation:
        regexes = (*policy.primary, *policy.secondary)
        if any(full_match(regexes, h) for h in hosts):
            continue
        named = [b for b in ids if host_of[b] is not None and full_match(regexes, b)]
        if named:
            out.append(f"Isolation policy {policy.name or '?'} names {', '.join(named)} by "
                       "host:port, but Pulsar matches its regexes against each broker's host: "
                       "it matches no broker")
    hostless = [b for b in ids if host_of[b] is None]
    if hostless:
        out.append(f"No host in the id of {', '.join(hostless)} (no ':port'): Pulsar cannot take "
                   "a host to match the namespace policies against and skips "
                   f"{'it' if len(hostless) == 1 else 'them'} as a placement candidate of every "
                   "namespace")
    return out

