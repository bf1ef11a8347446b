"""One fill of the modular candidate set for a namespace without an isolation policy, for the
JDK-run order tests (what ``ModularLoadManager._filled`` does for such a fill, alone)."""

from __future__ import annotations

from collections.abc import Sequence

from lbctl.config import Settings
from lbctl.model.javaorder import cleared_capacity, hashset_copy_order
from lbctl.model.loaddata import LoadData
from lbctl.model.policies import ClusterPolicies, broker_host


def shared_fill(available: Sequence[str], load: LoadData, policies: ClusterPolicies,
                settings: Settings, capacity: int) -> tuple[tuple[str, ...], int]:
    """The brokers in the order ``getAvailableBrokers()`` (a ``new HashSet<>(list)``) gives them,
    and ``brokerCandidateCache``'s table length (``capacity`` before; 0: 16 or none) once it is
    cleared and given the shared brokers that load persistent topics
    (``LoadManagerShared.applyNamespacePolicies`` without a policy)."""
    rule = settings.profile["isolationBrokerHost"]
    added = hashset_copy_order(available)
    fill = 0
    for b in added:
        host = broker_host(b, rule)
        bd = load.brokers.get(b)
        if host is not None and bd is not None and bd.local.persistentTopicsEnabled \
                and policies.is_shared(host):
            fill += 1
    cap = cleared_capacity(capacity, fill)
    return tuple(added), cap if cap > 16 else 0
