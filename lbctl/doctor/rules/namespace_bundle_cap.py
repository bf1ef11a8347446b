"""``namespace-bundle-cap``: a namespace at or near ``loadBalancerNamespaceMaximumBundles``.

Automatic splits stop at the cap (``BundleSplitterTask``: "Could not split namespace bundle …
because namespace … has too many bundles", #9484) and bundles are never merged back, so a
namespace at the cap keeps its hot bundles hot. At the cap: warning; from 90 % of it: info.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, is_system, listing

NEAR = 0.9


@rule("namespace-bundle-cap", Severity.WARNING,
      title="A namespace at or near loadBalancerNamespaceMaximumBundles",
      source="#9484",
      why="automatic splits stop at loadBalancerNamespaceMaximumBundles and bundles cannot be "
          "merged back, so its hot bundles stay hot (#9484).",
      fix="spread the traffic over more namespaces or partitions, or raise "
          "loadBalancerNamespaceMaximumBundles")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    key = "loadBalancerNamespaceMaximumBundles"
    cap = int(ctx.value(key))
    known = ctx.namespace_bundle_counts
    counts = {ns: known[ns] for ns in sorted(known) if not is_system(ns)}
    at = [ns for ns, c in counts.items() if c >= cap]
    near = [ns for ns, c in counts.items() if NEAR * cap <= c < cap]
    for group, sev, what in ((at, Severity.WARNING, "at"), (near, Severity.INFO, "near")):
        if group:
            yield r.finding(
                f"{len(group)} namespace(s) {what} the cap of {cap} bundles ({ctx.origin(key)}): "
                + listing([f"{ns} ({counts[ns]})" for ns in group]),
                severity=sev, fix=f"{ctx.set_fix(key, cap * 2)}, or spread the topics over more "
                "namespaces (bundles cannot be merged)", namespaces=group, settings=(key,))
