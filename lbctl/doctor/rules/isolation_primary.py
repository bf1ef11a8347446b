"""``isolation-primary-unmatched``: a namespace isolation policy whose primary regexes match no
broker.

``LoadManagerShared.applyNamespacePolicies`` matches a policy's primary and secondary regexes
against each broker's *host* — from 3.2 the broker id up to its last ``:`` (``parseBrokerHost``),
before it ``new URL("http://" + id).getHost()`` (the ``isolationBrokerHost`` profile value) —
never against ``host:port``. A primary regex written with the port (``broker-1:8080``), or for
hosts that are gone, matches nothing: with no primary candidate the ``min_available`` policy
(``min_limit`` at least 1) fails over to the secondary brokers, and with none of those either the
namespace's bundles have no candidate at all. The policy still looks right in ``pulsar-admin
ns-isolation-policy list``; only placements show it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, listing
from lbctl.model.policies import broker_host

#: a regex that ends in a port (``…:8080``, ``…:\d+``): what Pulsar never matches
_PORT = re.compile(r":(\d+|\\d[+*]?|\[0-9\][+*]?)\$?$")


@rule("isolation-primary-unmatched", Severity.WARNING,
      title="A namespace isolation policy whose primary brokers match no broker",
      source="LoadManagerShared.applyNamespacePolicies, PR #21894",
      why="Pulsar matches isolation regexes against each broker's host, without its port "
          "(LoadManagerShared.applyNamespacePolicies; the broker id's host from 3.2, PR #21894): "
          "a primary regex that matches no host leaves the policy's namespaces to its secondary "
          "brokers, or to no broker at all.",
      fix="`pulsar-admin ns-isolation-policy set CLUSTER POLICY --namespaces NS --primary "
          "'HOST-REGEX' --secondary 'HOST-REGEX' --auto-failover-policy-type min_available "
          "--auto-failover-policy-params min_limit=1,usage_threshold=80`, each regex matching "
          "the host alone (e.g. 'broker-1\\..*', no port)")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    policies = ctx.state.cluster_policies().isolation
    if not policies or not ctx.brokers:
        return
    host_rule = ctx.profile["isolationBrokerHost"]
    hosts = {b: h for b in ctx.brokers if (h := broker_host(b, host_rule)) is not None}
    for k, p in enumerate(policies):
        if any(p.is_primary(h) for h in hosts.values()):
            continue
        name = p.name or f"#{k + 1}"
        secondaries = sorted(b for b, h in hosts.items() if p.is_secondary(h))
        then = (f"its namespaces go to its secondary brokers only ({listing(secondaries)})"
                if secondaries else "its namespaces have no candidate broker at all")
        ported = [x for x in p.primary if _PORT.search(x)]
        verb = "names" if len(ported) == 1 else "name"
        hint = (f"; {listing([repr(x) for x in ported])} {verb} a port, which Pulsar never "
                "matches (it matches the host alone)" if ported else "")
        yield r.finding(
            f"isolation policy {name} (namespaces {listing([repr(x) for x in p.namespaces])}): "
            f"its primary regexes {listing([repr(x) for x in p.primary])} match none of the "
            f"{len(hosts)} brokers' hosts ({listing(sorted(set(hosts.values())), 3)}), so "
            f"{then}{hint}",
            brokers=secondaries)
