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
from lbctl.errors import LbctlError
from lbctl.executor import Executor, Mutation
from lbctl.sources.live_dynamic import read_dynamic_config

RESTORE_FAILED = "restore failed"


def value_text(value: object) -> str:
    """A dynamic setting's value as the path segment Pulsar parses: a string as it is, anything
    else (a journal's ``true``, ``5``) in its JSON form — never Python's ``True``."""
    if isinstance(value, str):
        return value
    import orjson

    return orjson.dumps(value).decode()

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
            text = value_text(v)
            out.append(Mutation(update_config_call(k, text), f"set {k}={text} (as before)"))
    return out


def still_paused(current: dict[str, str], previous: dict[str, Any]) -> dict[str, Any]:
    """The settings of ``previous`` not back to their value yet (``current``: the overrides in
    force) — what a restore still has to send; after a restore that failed half-way, the other
    half is not sent again."""
    return {k: v for k, v in previous.items()
            if current.get(k) != (None if v is None else value_text(v))}


def pause(executor: Executor, cluster: str, previous: dict[str, str | None]) -> None:
    """Journal the previous values, then set both settings to false (requests already shown and
    confirmed by the caller)."""
    executor.note({"state": "balancer-paused", "cluster": cluster, "previous": previous})
    for i, m in enumerate(pause_mutations(previous)):
        executor.send(m, earlier=i, extra={"balancer": True})


def restore(executor: Executor, cluster: str, previous: dict[str, Any]) -> list[str]:
    """Send every restore request (one failing does not keep the others back); journal
    ``balancer-restored`` only when all were applied. Returns the failures (empty: restored) —
    the caller must say them loudly: the balancer is still paused, and the journal's
    ``balancer-paused`` line stays the visible, restorable state (``drain --restore``)."""
    failed: list[str] = []
    for i, m in enumerate(restore_mutations(previous)):
        try:
            executor.send(m, earlier=i, extra={"balancer": True})
        except LbctlError as e:
            failed.append(f"{m.summary}: {e}")
    if not failed:
        executor.note({"state": "balancer-restored", "cluster": cluster, "previous": previous})
    return failed
