"""Words of the namespace policies in placement
(:mod:`lbctl.strategies.placement.namespace_policies`): isolation policies, shared brokers,
anti-affinity groups."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.strategies.placement.namespace_policies import PolicyWhy


def _skipped(brokers: tuple[str, ...]) -> str:
    return (f"skipped {', '.join(brokers)}: Pulsar cannot take a host from the broker id to "
            "match the policies against")


@words.register
def policy(w: PolicyWhy) -> str:
    match w.code:
        case "isolation":
            said = (f"isolation policy {w.name or 'an isolation policy'}: primaries "
                    f"{', '.join(w.names) or 'none'}")
            if w.failover:
                said += (f"; fewer than min_limit {w.min_limit}, so the secondaries too: "
                         f"{', '.join(w.others) or 'none'}")
            if w.skipped:
                said += f"; {_skipped(w.skipped)}"
            return said
        case "shared":
            kind = "non-persistent" if w.non_persistent else "persistent"
            parts = []
            if w.names:
                parts.append(f"{', '.join(w.names)} cannot load {kind} topics "
                             "(or have no load report)")
            if w.others:
                parts.append(f"{', '.join(w.others)} are primary brokers of an isolation policy "
                             "(not shared)")
            if w.skipped:
                parts.append(_skipped(w.skipped))
            return "; ".join(parts)
        case "anti-affinity":
            parts = []
            if w.domains:
                parts.append(f"failure domains owning more than {w.domain_least} namespace(s) of "
                             f"the group: removed {', '.join(w.domains)}")
            if w.names:
                parts.append(f"kept the brokers owning {w.least} of the anti-affinity group; "
                             "removed " + ", ".join(f"{b} ({n})"
                                                    for b, n in zip(w.names, w.counts, strict=True)))
            return "; ".join(parts)
