"""Wiring for `recommend` and `explain`: snapshots → settings → strategies → cycles → plans.

Kept out of the CLI so the same path serves tests, the fleet pipeline and future commands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lbctl.config import Settings, read_broker_conf, resolve
from lbctl.cycle import CycleResult, LoadManager
from lbctl.errors import UsageError
from lbctl.model.cluster import EXTENSIBLE, ClusterState
from lbctl.plan import Plan, build_plan
from lbctl.strategies.registry import PLACEMENT, SHEDDING


@dataclass(frozen=True)
class Options:
    """What the user chose on the command line."""

    strategy: str | None = None
    placement: str | None = None
    overrides: Mapping[str, str] | None = None
    broker_conf: Path | None = None
    seed: int | None = None


def settings_for(state: ClusterState, opts: Options, broker_conf: Mapping[str, str]) -> Settings:
    overrides = dict(opts.overrides or {})
    return resolve(state.config, broker_conf, overrides)


def load_manager_for(settings: Settings, opts: Options) -> LoadManager:
    """Strategies from the flags, else from the settings (``loadBalancerLoadSheddingStrategy``,
    ``loadBalancerLoadPlacementStrategy``)."""
    shed_name = SHEDDING.short_name(opts.strategy or settings["loadBalancerLoadSheddingStrategy"])
    place_name = PLACEMENT.short_name(
        opts.placement or settings["loadBalancerLoadPlacementStrategy"])
    if place_name == "AvgShedder" and shed_name != "AvgShedder":
        # ModularLoadManagerImpl refuses to start with this pair.
        raise UsageError(
            "placement AvgShedder needs the AvgShedder shedding strategy (Pulsar uses one instance "
            f"for both); got shedding strategy {shed_name}")
    return LoadManager(
        SHEDDING.create(shed_name),
        PLACEMENT.create(place_name),
        PLACEMENT.create("RoundRobinBrokerSelector"),
        seed=opts.seed,
    )


def require_modular(states: Sequence[ClusterState], why: str) -> None:
    """At least one snapshot, none of an extensible cluster (``why`` ends the message)."""
    if not states:
        raise UsageError("no snapshot given")
    for st in states:
        if st.load_manager == EXTENSIBLE:
            raise UsageError(f"{st.source or st.cluster}: the snapshot is of an extensible load "
                             f"manager cluster; {why}")


def run_cycles(states: Sequence[ClusterState], opts: Options) -> list[CycleResult]:
    """Replay the snapshots as successive cycles of the modular load manager."""
    require_modular(states, "the modular cycle cannot replay it (analysis.plans sends it to the "
                            "extensible runner)")
    conf = read_broker_conf(opts.broker_conf) if opts.broker_conf else {}
    settings = [settings_for(st, opts, conf) for st in states]
    lm = load_manager_for(settings[-1], opts)
    return lm.run_sequence(states, settings)


def plans(states: Sequence[ClusterState], opts: Options) -> list[Plan]:
    from lbctl.extensible.runner import run_extensible, uses_extensible

    if uses_extensible(states, opts):  # extensible snapshots, or --strategy TransferShedder
        from lbctl.plan import build_extensible_plan

        return [build_extensible_plan(c) for c in run_extensible(states, opts)]
    return [build_plan(c) for c in run_cycles(states, opts)]
