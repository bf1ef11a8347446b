"""Pausing the load balancer's automatic moves during a drain, and restoring it.

``--pause-balancer`` sets the two dynamic settings that make the leader move bundles by itself —
``loadBalancerSheddingEnabled`` (``doLoadShedding``) and ``loadBalancerAutoBundleSplitEnabled``
(``checkNamespaceBundleSplit``) — to ``false`` through ``POST
/admin/v2/brokers/configuration/{name}/false`` (``pulsar-admin brokers update-dynamic-config``),
after reading the overrides in force (``GET /admin/v2/brokers/configuration/values``). The
previous state of each is journaled (``balancer-paused``: its override, or null when it had none)
before the first change. Restoring puts each back: the previous override is set again, and a
setting that had none has its override deleted (``DELETE /admin/v2/brokers/configuration/{name}``,
back to broker.conf's value). Every request goes through the executor: shown, confirmed, journaled.
"""

from __future__ import annotations

from typing import Any

from lbctl.admin.client import delete_config_call, update_config_call
from lbctl.executor import Executor, Mutation
from lbctl.sources.live_dynamic import read_dynamic_config

SETTINGS = ("loadBalancerSheddingEnabled", "loadBalancerAutoBundleSplitEnabled")


def to_pause(executor: Executor) -> dict[str, str | None]:
    """The balancer settings that are on now, each with its dynamic override (None: none) — what
    pausing changes and restoring puts back. A setting already off is left alone (pausing twice
    sends nothing the second time)."""
    values = read_dynamic_config(executor.client)
    runtime = executor.client.runtime_config()
    out: dict[str, str | None] = {}
    for k in SETTINGS:
        now = values.get(k, runtime.get(k, "true"))
        if str(now).strip().lower() != "false":
            out[k] = values.get(k)
    return out


def pause_mutations(previous: dict[str, str | None]) -> list[Mutation]:
    return [Mutation(update_config_call(k, "false"), f"set {k}=false (pause the balancer)")
            for k in SETTINGS if k in previous]


def restore_mutations(previous: dict[str, Any]) -> list[Mutation]:
    out = []
    for k in SETTINGS:
        if k not in previous:
            continue
        v = previous[k]
        if v is None:
            out.append(Mutation(delete_config_call(k),
                                f"delete the dynamic {k} (back to broker.conf's value)"))
        else:
            out.append(Mutation(update_config_call(k, str(v)), f"set {k}={v} (as before)"))
    return out


def pause(executor: Executor, cluster: str, previous: dict[str, str | None]) -> None:
    """Journal the previous values, then set both settings to false (requests already shown and
    confirmed by the caller)."""
    executor.note({"state": "balancer-paused", "cluster": cluster, "previous": previous})
    for i, m in enumerate(pause_mutations(previous)):
        executor.send(m, earlier=i, extra={"balancer": True})


def restore(executor: Executor, cluster: str, previous: dict[str, Any]) -> None:
    for i, m in enumerate(restore_mutations(previous)):
        executor.send(m, earlier=i, extra={"balancer": True})
    executor.note({"state": "balancer-restored", "cluster": cluster, "previous": previous})
