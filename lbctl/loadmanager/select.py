"""Which load manager serves a request, and with which settings: snapshots + options → cycles.

The one place where:

* **settings are resolved** for each snapshot (``--set`` > ``--broker-conf`` > the snapshot's
  ``config`` > Pulsar's defaults, :func:`lbctl.config.resolve`);
* **the load manager is chosen**: an extensible snapshot always runs the extensible load manager
  (Pulsar falls back to TransferShedder whatever ``loadBalancerLoadSheddingStrategy`` says); a
  modular one does when TransferShedder is asked for, on the command line or in the snapshot's
  configuration; otherwise the modular load manager with the shedding and placement strategies of
  the flags, else of the settings;
* **strategy pairs are checked**: AvgShedder as placement needs AvgShedder as shedder
  (``ModularLoadManagerImpl`` refuses to start otherwise); the extensible load manager sheds with
  TransferShedder and places with its LeastResourceUsageWithWeight only.

``recommend``, ``explain``, the simulator and the fleet replay all come through here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lbctl.config import Settings, read_broker_conf, resolve
from lbctl.errors import UsageError
from lbctl.loadmanager.base import CycleResult
from lbctl.loadmanager.extensible import ExtensibleLoadManager
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.model.cluster import EXTENSIBLE, ClusterState
from lbctl.plan import Plan
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.placement.extensible_least_resource_usage import NAME as EXT_PLACEMENT
from lbctl.strategies.shedding.transfer import NAME as TRANSFER_SHEDDER


@dataclass(frozen=True)
class Options:
    """What the user chose on the command line."""

    strategy: str | None = None
    placement: str | None = None
    overrides: Mapping[str, str] | None = None
    broker_conf: Path | None = None
    seed: int | None = None


def settings_for(state: ClusterState, opts: Options, broker_conf: Mapping[str, str]) -> Settings:
    """One snapshot's settings (``broker_conf``: the ``--broker-conf`` file, already read)."""
    overrides = dict(opts.overrides or {})
    return resolve(state.config, broker_conf, overrides)


def resolve_settings(states: Sequence[ClusterState], opts: Options) -> list[Settings]:
    """Each snapshot's settings, the ``--broker-conf`` file read once."""
    conf = read_broker_conf(opts.broker_conf) if opts.broker_conf else {}
    return [settings_for(st, opts, conf) for st in states]


def uses_extensible(states: Sequence[ClusterState], opts: Options) -> bool:
    """Whether the extensible load manager serves these snapshots (module docstring)."""
    kinds = {st.load_manager == EXTENSIBLE for st in states}
    if len(kinds) > 1:
        raise UsageError("the snapshots mix modular and extensible load manager clusters")
    if kinds == {True}:
        if opts.strategy and SHEDDING.short_name(opts.strategy) != TRANSFER_SHEDDER:
            raise UsageError(f"the extensible load manager sheds with {TRANSFER_SHEDDER} only; "
                             f"got --strategy {opts.strategy}")
        return True
    name = opts.strategy
    if name is None and states:
        raw = states[-1].config.get("loadBalancerLoadSheddingStrategy")
        name = raw if isinstance(raw, str) else None
    return name is not None and bool(name) and SHEDDING.short_name(name) == TRANSFER_SHEDDER


def modular_load_manager(settings: Settings, opts: Options, *,
                         check_splits: bool = True) -> ModularLoadManager:
    """The modular load manager with the strategies of the flags, else of the settings
    (``loadBalancerLoadSheddingStrategy``, ``loadBalancerLoadPlacementStrategy``)."""
    shed_name = SHEDDING.short_name(opts.strategy or settings["loadBalancerLoadSheddingStrategy"])
    place_name = PLACEMENT.short_name(
        opts.placement or settings["loadBalancerLoadPlacementStrategy"])
    if place_name == "AvgShedder" and shed_name != "AvgShedder":
        # ModularLoadManagerImpl refuses to start with this pair.
        raise UsageError(
            "placement AvgShedder needs the AvgShedder shedding strategy (Pulsar uses one instance "
            f"for both); got shedding strategy {shed_name}")
    return ModularLoadManager(
        SHEDDING.create(shed_name),
        PLACEMENT.create(place_name),
        PLACEMENT.create("RoundRobinBrokerSelector"),
        seed=opts.seed,
        check_splits=check_splits,
    )


def extensible_load_manager(opts: Options) -> ExtensibleLoadManager:
    """The extensible load manager (its placement is fixed: a different ``--placement`` is an
    error)."""
    if opts.placement and PLACEMENT.short_name(opts.placement) != EXT_PLACEMENT:
        raise UsageError(f"the extensible load manager places with {EXT_PLACEMENT} only; got "
                         f"--placement {opts.placement}")
    return ExtensibleLoadManager(seed=opts.seed)


def require_modular(states: Sequence[ClusterState], why: str) -> None:
    """At least one snapshot, none of an extensible cluster (``why`` ends the message)."""
    if not states:
        raise UsageError("no snapshot given")
    for st in states:
        if st.load_manager == EXTENSIBLE:
            raise UsageError(f"{st.source or st.cluster}: the snapshot is of an extensible load "
                             f"manager cluster; {why}")


def run(states: Sequence[ClusterState], opts: Options) -> Sequence[CycleResult]:
    """Replay the snapshots as successive cycles of the load manager that serves them."""
    if uses_extensible(states, opts):  # extensible snapshots, or --strategy TransferShedder
        if not states:
            raise UsageError("no snapshot given")
        ext = extensible_load_manager(opts)
        return ext.run_sequence(states, resolve_settings(states, opts))
    require_modular(states, "the modular load manager cannot replay it")
    settings = resolve_settings(states, opts)
    return modular_load_manager(settings[-1], opts).run_sequence(states, settings)


def plans(states: Sequence[ClusterState], opts: Options) -> list[Plan]:
    """The plan of every cycle (``recommend --all-cycles``, the fleet replay)."""
    return [r.plan() for r in run(states, opts)]


def check_runnable(states: Sequence[ClusterState]) -> None:
    """Raise what :func:`run` would raise about the snapshots' own settings (strategies named in
    ``config``, the load-manager mix), without running a cycle: ``snapshot validate`` accepts
    exactly what ``recommend`` can run."""
    from lbctl.errors import LbctlError, SnapshotFormatError

    if not states:
        return
    opts = Options()
    try:
        if uses_extensible(states, opts):
            extensible_load_manager(opts)
            return
        for st, settings in zip(states, resolve_settings(states, opts), strict=True):
            try:
                modular_load_manager(settings, opts)
            except LbctlError as e:
                raise SnapshotFormatError(st.source or st.cluster, "config",
                                          f"{e} (recommend would refuse it)") from None
    except SnapshotFormatError:
        raise
    except LbctlError as e:
        raise SnapshotFormatError(states[-1].source or states[-1].cluster, "", str(e)) from None
