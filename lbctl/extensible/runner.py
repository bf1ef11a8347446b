"""Wiring for ``recommend``/``explain`` on the extensible path: which snapshots go there, and the
settings and load manager they run with (the counterpart of :mod:`lbctl.analysis`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lbctl.config import read_broker_conf, resolve
from lbctl.errors import UsageError
from lbctl.extensible.cycle import ExtensibleCycleResult, ExtensibleLoadManager
from lbctl.model.cluster import EXTENSIBLE, ClusterState
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.placement.extensible_least_resource_usage import NAME as PLACEMENT_NAME
from lbctl.strategies.shedding.transfer import NAME


def uses_extensible(states: Sequence[ClusterState], opts: Any) -> bool:
    """Extensible snapshots always run the extensible cycle (Pulsar falls back to TransferShedder
    whatever ``loadBalancerLoadSheddingStrategy`` says); modular ones when TransferShedder is asked
    for, on the command line or in the snapshot's configuration."""
    kinds = {st.load_manager == EXTENSIBLE for st in states}
    if len(kinds) > 1:
        raise UsageError("the snapshots mix modular and extensible load manager clusters")
    if kinds == {True}:
        if opts.strategy and SHEDDING.short_name(opts.strategy) != NAME:
            raise UsageError(f"the extensible load manager sheds with {NAME} only; got --strategy "
                             f"{opts.strategy}")
        return True
    name = opts.strategy
    if name is None and states:
        raw = states[-1].config.get("loadBalancerLoadSheddingStrategy")
        name = raw if isinstance(raw, str) else None
    return bool(name) and SHEDDING.short_name(name) == NAME


def run_extensible(states: Sequence[ClusterState], opts: Any) -> list[ExtensibleCycleResult]:
    if not states:
        raise UsageError("no snapshot given")
    if opts.placement and PLACEMENT.short_name(opts.placement) != PLACEMENT_NAME:
        raise UsageError(f"the extensible load manager places with {PLACEMENT_NAME} only; got "
                         f"--placement {opts.placement}")
    conf = read_broker_conf(opts.broker_conf) if opts.broker_conf else {}
    settings = [resolve(st.config, conf, dict(opts.overrides or {})) for st in states]
    return ExtensibleLoadManager(seed=opts.seed).run_sequence(states, settings)
