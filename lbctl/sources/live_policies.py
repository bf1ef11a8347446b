"""Placement data beside load, read from a running cluster (the snapshot sections of
``docs/snapshot-policies.md``).

* :func:`read_policies` — ``GET /admin/v2/clusters/{cluster}/namespaceIsolationPolicies`` and
  ``…/failureDomains`` once, and ``GET /admin/v2/namespaces/{t}/{ns}/antiAffinity`` for every
  namespace (concurrently): the ``policies`` section. A policy read that fails (other than a
  namespace deleted meanwhile) leaves the whole section out — a partial set of policies would
  mislead more than none — with a warning.
* :func:`read_namespace_topics` — per namespace, ``GET …/namespaces/{t}/{ns}/topics?mode=ALL&
  includeSystemTopic=true`` (the persistent and non-persistent topics in metadata, loaded or not),
  ``GET /admin/v2/persistent/{t}/{ns}/partitioned`` and ``/non-persistent/…/partitioned``, then each
  partitioned topic's ``…/{topic}/partitions``: the ``namespaceTopics`` section. A namespace whose
  lists cannot be read is left out (its splits then see its loaded topics only).
* :func:`read_broker_identity` — on each broker itself, ``GET /admin/v2/brokers/version`` and its
  runtime ``loadManagerClassName`` (the two fields of ``BrokerLookupData`` the extensible broker
  filters read, which no load report carries on that load manager). Nothing else of the runtime
  configuration is kept (it holds secrets).

Sources never decide: these functions copy what the admin API says.
"""

from __future__ import annotations

from typing import Any

from lbctl.admin.client import (
    ANTI_AFFINITY,
    BROKER_VERSION,
    FAILURE_DOMAINS,
    ISOLATION_POLICIES,
    NAMESPACE_TOPICS,
    NON_PERSISTENT_PARTITIONED,
    NON_PERSISTENT_PARTITIONS,
    PERSISTENT_PARTITIONED,
    PERSISTENT_PARTITIONS,
    RUNTIME_CONFIG,
    AdminClient,
    Call,
    Endpoint,
    call,
)
from lbctl.admin.errors import AdminError, NotFound


def _on(endpoint: Endpoint, namespace: str, query: dict[str, Any] | None = None) -> Call:
    """A call on a namespace's endpoint (``tenant/ns``)."""
    tenant, ns = namespace.split("/", 1)
    return call(endpoint, query=query, tenant=tenant, namespace=ns)


def read_policies(client: AdminClient, cluster: str, namespaces: list[str],
                  warnings: list[str]) -> dict[str, Any] | None:
    """The ``policies`` section, or ``None`` (with a warning) when it cannot be read whole."""
    calls = [call(ISOLATION_POLICIES, cluster=cluster), call(FAILURE_DOMAINS, cluster=cluster)]
    calls += [_on(ANTI_AFFINITY, n) for n in namespaces]
    results = client.gather(calls)
    isolation, domains, groups = results[0], results[1], results[2:]
    for what, got in (("namespace isolation policies", isolation), ("failure domains", domains)):
        if isinstance(got, AdminError):
            warnings.append(f"{what} not read ({got}): policies not captured, none applied")
            return None
        if got is not None and not isinstance(got, dict):
            warnings.append(f"{what}: expected a JSON object: policies not captured, none applied")
            return None
    anti: dict[str, str] = {}
    for ns, got in zip(namespaces, groups, strict=True):
        if isinstance(got, NotFound):
            continue  # deleted while reading
        if isinstance(got, AdminError):
            warnings.append(f"anti-affinity group of {ns} not read ({got}): policies not "
                            "captured, none applied")
            return None
        if isinstance(got, str) and got.strip():
            anti[ns] = got
    return {"namespaceIsolationPolicies": isolation or {}, "antiAffinityGroups": anti,
            "failureDomains": {d: {"brokers": list((v or {}).get("brokers") or [])}
                               for d, v in (domains or {}).items() if isinstance(v, dict)}}


def read_namespace_topics(client: AdminClient, namespaces: list[str],
                          warnings: list[str]) -> dict[str, Any]:
    """The ``namespaceTopics`` section of the namespaces whose lists could be read."""
    system = {"includeSystemTopic": "true"}
    calls: list[Call] = []
    for n in namespaces:
        calls += [_on(NAMESPACE_TOPICS, n, {"mode": "ALL", **system}),
                  _on(PERSISTENT_PARTITIONED, n, system),
                  _on(NON_PERSISTENT_PARTITIONED, n, system)]
    results = client.gather(calls)
    lists: dict[str, tuple[list[str], list[str], list[str]]] = {}
    for i, n in enumerate(namespaces):
        every, part_p, part_np = results[3 * i: 3 * i + 3]
        bad = next((r for r in (every, part_p, part_np) if isinstance(r, AdminError)), None)
        if bad is not None or not all(isinstance(r, list) for r in (every, part_p, part_np)):
            why = str(bad) if bad is not None else "expected JSON arrays of topic names"
            warnings.append(f"topic lists of {n} not read ({why}): its splits see its loaded "
                            "topics only")
            continue
        lists[n] = ([t for t in every if isinstance(t, str)],
                    [t for t in part_p if isinstance(t, str)],
                    [t for t in part_np if isinstance(t, str)])
    # every partitioned topic's partition count
    meta_calls: list[Call] = []
    keys: list[tuple[str, str]] = []
    for n, (_, part_p, part_np) in lists.items():
        for topic, endpoint in [*((t, PERSISTENT_PARTITIONS) for t in part_p),
                                *((t, NON_PERSISTENT_PARTITIONS) for t in part_np)]:
            local = topic.split("://", 1)[-1].split("/", 2)[-1]
            tenant, namespace = n.split("/", 1)
            meta_calls.append(call(endpoint, tenant=tenant, namespace=namespace, topic=local))
            keys.append((n, topic))
    partitions: dict[str, dict[str, int]] = {}
    for (n, topic), got in zip(keys, client.gather(meta_calls), strict=True):
        count = got.get("partitions") if isinstance(got, dict) else None
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            partitions.setdefault(n, {})[topic] = count
        else:
            warnings.append(f"partitions of {topic} not read "
                            f"({got if isinstance(got, AdminError) else 'no partitions field'})")
    out: dict[str, Any] = {}
    for n, (every, _, _) in lists.items():
        prefix = f"://{n}/"
        out[n] = {
            "persistent": [t for t in every if t.startswith("persistent" + prefix)],
            "nonPersistent": [t for t in every if t.startswith("non-persistent" + prefix)],
            "partitioned": {t: c for t, c in partitions.get(n, {}).items() if prefix in t},
        }
    return out


def read_broker_identity(client: AdminClient, brokers: list[str]
                         ) -> dict[str, dict[str, str]]:
    """Per broker: ``brokerVersionString`` and ``loadManagerClassName`` when it answered."""
    calls = []
    for b in brokers:
        base = client.broker_url(b)
        calls += [call(BROKER_VERSION, base=base), call(RUNTIME_CONFIG, base=base)]
    results = client.gather(calls)
    out: dict[str, dict[str, str]] = {}
    for i, b in enumerate(brokers):
        version, conf = results[2 * i], results[2 * i + 1]
        found: dict[str, str] = {}
        if isinstance(version, str) and version:
            found["brokerVersionString"] = version
        lm = conf.get("loadManagerClassName") if isinstance(conf, dict) else None
        if isinstance(lm, str) and lm:
            found["loadManagerClassName"] = lm
        out[b] = found
    return out
