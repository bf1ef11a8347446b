"""Who owns each bundle now, from every broker's own ownership listing rather than its load report.

A broker's load report (``LocalBrokerData``) lists its bundles as they were when it last wrote the
report, and the modular load manager's ``LoadReportUpdaterTask`` rewrites it only when
``needBrokerDataUpdate`` says so: a change past ``loadBalancerReportUpdateThresholdPercentage``
or ``loadBalancerReportUpdateMaxIntervalMinutes`` (15 by default) after the last write. A bundle
that moves shows in the reports only once both brokers have rewritten theirs, and one that moves
twice in between may show no move at all.

``GET /admin/v2/brokers/{clusterName}/{brokerId}/ownedNamespaces`` (``BrokersBase
.getOwnedNamespaces``, Pulsar's admin API; answered by the broker named, another one redirects:
``maybeRedirectToBroker``) is what the broker owns now
(``NamespaceService.getOwnedNameSpacesStatusAsync``): a map of full bundle name →
``NamespaceOwnershipStatus`` (``broker_assignment``, ``is_controlled``, ``is_active``). One request per broker, sent to that broker itself and all at once on the
client's connections (:meth:`lbctl.admin.client.AdminClient.gather`), so no redirect is needed.

The heartbeat, SLA-monitor and ``pulsar/system`` namespaces never move
(``NamespaceService.isSystemServiceNamespace``) and are left out. A broker that refuses or fails
is named in :attr:`Ownership.failed`; when none answers (an older broker, a role without
super-user access: ``validateBothSuperuserAndBrokerOperation`` with
``BrokerOperation.LIST_OWNED_NAMESPACES``) the ownership is None and
:attr:`Ownership.note` says why, and the caller keeps to the load reports.

Sources never decide: this only copies what each broker says it owns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lbctl.admin.client import OWNED_NAMESPACES, AdminClient, call
from lbctl.admin.errors import AdminError
from lbctl.model.bundle import is_system_service_namespace, namespace_of


@dataclass(frozen=True)
class Ownership:
    """One read of every broker's listing: bundle → broker (None: no broker answered),
    the brokers that did not answer (→ why), and a one-line note when nothing could be read."""

    owners: dict[str, str] | None
    failed: dict[str, str] = field(default_factory=dict)
    note: str | None = None


def _owned(answer: Any) -> list[str] | None:
    """The movable bundles in one ``ownedNamespaces`` answer; None for an answer of another
    shape (not a JSON object of bundle names)."""
    if not isinstance(answer, dict):
        return None
    return [b for b in answer if isinstance(b, str) and b.count("/") >= 2
            and not is_system_service_namespace(namespace_of(b))]


def read_ownership(client: AdminClient, cluster: str, brokers: Sequence[str]) -> Ownership:
    """Every broker's ``ownedNamespaces``, read concurrently (module docstring). A bundle two
    brokers list (a transfer caught half-way) goes to the one listed last in ``brokers``, as the
    reports' :meth:`~lbctl.model.cluster.ClusterState.owners` does with their order."""
    if not brokers:
        return Ownership(None, {}, "no broker to ask for its owned bundles")
    answers = client.gather([call(OWNED_NAMESPACES, base=client.broker_url(b),
                                  clusterName=cluster, brokerId=b) for b in brokers])
    owners: dict[str, str] = {}
    failed: dict[str, str] = {}
    for b, ans in zip(brokers, answers, strict=True):
        owned = None if isinstance(ans, AdminError) else _owned(ans)
        if owned is None:
            failed[b] = str(ans) if isinstance(ans, AdminError) else \
                "ownedNamespaces: expected a JSON object of bundle names"
            continue
        for bundle in owned:
            owners[bundle] = b
    if len(failed) == len(brokers):
        first = next(iter(failed.values()))
        return Ownership(None, failed, "ownership read from the load reports (a bundle's move "
                         "shows once both brokers rewrite theirs): no broker answered "
                         f"ownedNamespaces ({first})")
    return Ownership(owners, failed)


def merged(reported: Mapping[str, str], read: Ownership) -> dict[str, str]:
    """Bundle → owner for a capture: the brokers' listings where they answered, the reports
    elsewhere. A bundle no answering broker lists keeps the report's owner only when that broker
    did not answer; one whose reported owner answered without it is owned by nobody now (unloaded,
    its clients not back yet, or moved to a broker that did not answer) — the stale report would
    count a move back. Without a read, the reports."""
    if read.owners is None:
        return dict(reported)
    out = dict(read.owners)
    for bundle, owner in reported.items():
        if bundle not in out and owner in read.failed:
            out[bundle] = owner
    return out
