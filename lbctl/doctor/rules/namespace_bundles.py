"""``namespace-few-bundles``: a namespace carrying traffic with fewer bundles than brokers.

A bundle is the unit of placement: a namespace of 4 bundles (``defaultNumberOfNamespaceBundles``)
can use at most 4 brokers however many the cluster has (PR #12137 proposed 32 for this; Pulsar's
documentation advises more bundles than brokers). Namespaces under ``pulsar/`` and namespaces
without traffic are left out; one finding lists them all.
"""

from __future__ import annotations

from collections.abc import Iterator
from shlex import quote

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, is_system, listing
from lbctl.model.bundle import namespace_of


def namespace_traffic(ctx: Context) -> dict[str, float]:
    """Message rate + throughput of each namespace's owned bundles (0 when it has none)."""
    out: dict[str, float] = {}
    for local in ctx.brokers.values():
        for bundle, st in local.lastStats.items():
            ns = namespace_of(bundle)
            out[ns] = out.get(ns, 0.0) + st.msg_rate + st.throughput
    return out


@rule("namespace-few-bundles", Severity.WARNING,
      title="A namespace with traffic and fewer bundles than brokers",
      source="PR #12137",
      why="a bundle is placed whole, so a namespace with fewer bundles than brokers can only use "
          "that many brokers (PR #12137: 4 bundles on 10 brokers).",
      fix="split its bundles: `lbctl split-bundle NAMESPACE -bt LARGEST` (or `pulsar-admin "
          "namespaces split-bundle NAMESPACE -b LARGEST`); create namespaces with --bundles ≥ the broker count")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    n = len(ctx.brokers)
    if n < 2:
        return
    traffic = namespace_traffic(ctx)
    counts = ctx.namespace_bundle_counts
    few = sorted(ns for ns, c in counts.items() if not is_system(ns) and traffic.get(ns, 0.0) > 0
                 and c < n)
    if few:
        shown = [f"{ns} ({counts[ns]})" for ns in few]
        yield r.finding(
            f"{len(few)} namespace(s) with traffic have fewer bundles than the {n} brokers: "
            f"{listing(shown)}",
            fix=f"`lbctl split-bundle {quote(few[0])} -bt LARGEST` (repeat until it has ≥ {n} "
                f"bundles), or `pulsar-admin namespaces split-bundle {quote(few[0])} -b LARGEST`",
            namespaces=few)
