"""Which load manager serves a request, and with which settings: snapshots + options → cycles.

The one place where:

* **the Pulsar release is chosen** (:func:`profile_of`): ``--pulsar-version``, else the version
  most of the snapshot's brokers report (``brokerVersionString``), else the newest profile
  (:mod:`lbctl.versions`); an unknown release gets the nearest profile and a warning;
* **settings are resolved** for each snapshot (``--set`` > its ``dynamicConfig`` > ``--broker-conf``
  > the snapshot's ``config`` > that release's defaults, :func:`lbctl.config.of_state`);
* **the load manager is chosen** (:func:`choose`, the one function that returns a
  :class:`~lbctl.loadmanager.base.LoadManager`): an extensible snapshot always runs the extensible
  load manager (Pulsar falls back to TransferShedder whatever ``loadBalancerLoadSheddingStrategy``
  says); a modular one does when TransferShedder is asked for, on the command line or in the
  snapshot's configuration; otherwise the modular load manager with the shedding and placement
  strategies of the flags, else of the settings. A command that offers one of lbctl's own load
  managers beside Pulsar's (the simulator and ``compare``: lbctl's planner as ``--strategy
  lbctl``) hands it in as an :class:`Own`; the simulator's load model moves the brokers' reports,
  so there a modular snapshot runs the modular load manager whatever shedder is named;
* **strategy pairs are checked**: AvgShedder as placement needs AvgShedder as shedder
  (``ModularLoadManagerImpl`` refuses to start otherwise); the extensible load manager sheds with
  TransferShedder and places with its LeastResourceUsageWithWeight only; lbctl's planner places
  its bundles itself (:func:`strategy_pair`, :func:`pair_options` for ``compare``);
* **the release's strategies are used**: a strategy the release lacks is replaced as Pulsar
  replaces it (AvgShedder before 3.0.6 → OverloadShedder for shedding, LeastLongTermMessageRate for
  placement), with a warning; the releases whose AvgShedder check read the wrong key (PR #23156)
  refuse to start the modular load manager unless ``loadBalancerPlacementStrategy`` also names
  AvgShedder; the extensible load manager needs Pulsar 3.0.

``recommend``, ``explain``, ``--watch``, ``snapshot validate``, the simulator, ``compare`` and the
fleet replay all come through here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from lbctl import versions
from lbctl.collector import collector_paused
from lbctl.config import SETTINGS_BY_NAME, Settings, of_state, read_broker_conf
from lbctl.errors import UsageError
from lbctl.loadmanager.base import CycleResult, LoadManager
from lbctl.loadmanager.clock import Follower, project
from lbctl.loadmanager.modular import ModularLoadManager
from lbctl.model.cluster import EXTENSIBLE, MODULAR, SIMPLE, ClusterState
from lbctl.model.load import trim_percent_memo
from lbctl.model.outcome import NO_HISTORY
from lbctl.plan import Plan
from lbctl.records import replace
from lbctl.strategies.builtin import PLACEMENT, SHEDDING
from lbctl.strategies.placement.extensible_least_resource_usage import NAME as EXT_PLACEMENT
from lbctl.strategies.shedding.transfer import NAME as TRANSFER_SHEDDER

if TYPE_CHECKING:  # imported when an extensible cycle runs: a modular snapshot never needs it
    from lbctl.loadmanager.extensible import ExtensibleLoadManager


class Options(Struct, frozen=True):
    """What the user chose on the command line."""

    strategy: str | None = None
    placement: str | None = None
    overrides: Mapping[str, str] | None = None
    broker_conf: Path | None = None
    seed: int | None = None
    pulsar_version: str | None = None
    assume_steady: bool = False
    live: bool = False  # the states were read from a running cluster a moment ago
    project: bool = False  # explain: how many more cycles of the last state open the gate


class Own(Struct, frozen=True):
    """A load manager of lbctl's own that a command offers beside Pulsar's, under a strategy
    name: the simulator's and ``compare``'s ``--strategy lbctl`` (lbctl's planner,
    :func:`lbctl.planner.cycle.offer`). It decides placement too, so no placement goes with it.
    The commands that offer it hand it to :func:`choose`, which this layer cannot import."""

    name: str
    title: str  # how a message names it: "lbctl's planner"
    build: Callable[[], LoadManager[Any]]

    def named(self, strategy: str | None) -> bool:
        """Whether a ``--strategy`` value names it (case and spaces aside)."""
        return strategy is not None and strategy.strip().lower() == self.name


def profile_of(states: Sequence[ClusterState], opts: Options) -> tuple[versions.Profile, list[str]]:
    """The Pulsar release to model for a run over ``states``, and what to warn about it:
    :func:`lbctl.versions.choose` over the last snapshot's brokers (one release for the whole
    run, whatever command)."""
    reported = {b: local.brokerVersionString
                for st in states[-1:] for b, local in st.brokers.items()}
    try:
        # a live read's versions are the cluster's, whether or not the command says it read
        # live (lbctl watch reads each capture with options that name no source)
        live = opts.live or any(st.live_read for st in states[-1:])
        return versions.choose(opts.pulsar_version, reported,
                               origin="cluster" if live else "snapshot")
    except ValueError as e:
        raise UsageError(f"--pulsar-version: {e}") from None


def settings_for(state: ClusterState, opts: Options, broker_conf: Mapping[str, str],
                 profile: versions.Profile | None = None) -> Settings:
    """One snapshot's settings (``broker_conf``: the ``--broker-conf`` file, already read)."""
    overrides = dict(opts.overrides or {})
    if profile is None:
        profile, _ = profile_of([state], opts)
    return of_state(state, broker_conf, overrides, profile=profile)


def resolve_settings(states: Sequence[ClusterState], opts: Options) -> list[Settings]:
    """Each snapshot's settings, the ``--broker-conf`` file read once, one release for all."""
    conf = read_broker_conf(opts.broker_conf) if opts.broker_conf else {}
    profile, _ = profile_of(states, opts) if states else (versions.newest(), [])
    return [settings_for(st, opts, conf, profile) for st in states]


def version_warnings(states: Sequence[ClusterState], opts: Options) -> list[str]:
    """What every plan of this run says up front: the release modelled when it is a guess, and
    that a live read has no history."""
    notes = profile_of(states, opts)[1] if states else []
    if opts.live:
        notes.append(NO_HISTORY)
    return notes


def kind_of(states: Sequence[ClusterState]) -> str | None:
    """The load manager of the snapshots' cluster (``None``: no snapshot); a mix is refused."""
    kinds = {st.load_manager == EXTENSIBLE for st in states}
    if len(kinds) > 1:
        raise UsageError("the snapshots mix modular and extensible load manager clusters")
    return None if not kinds else EXTENSIBLE if kinds == {True} else MODULAR


def uses_extensible(states: Sequence[ClusterState], opts: Options) -> bool:
    """Whether the extensible load manager serves these snapshots (module docstring)."""
    if kind_of(states) == EXTENSIBLE:
        if opts.strategy and SHEDDING.short_name(opts.strategy) != TRANSFER_SHEDDER:
            raise UsageError(f"the extensible load manager sheds with {TRANSFER_SHEDDER} only; "
                             f"got --strategy {opts.strategy}")
        return True
    name = opts.strategy
    if name is None and states:
        raw = states[-1].config.get("loadBalancerLoadSheddingStrategy")
        name = raw if isinstance(raw, str) else None
    return name is not None and bool(name) and SHEDDING.short_name(name) == TRANSFER_SHEDDER


def modular_load_manager(settings: Settings, opts: Options, *, check_splits: bool = True,
                         warnings: Sequence[str] = ()) -> ModularLoadManager:
    """The modular load manager with the strategies of the flags, else of the settings
    (``loadBalancerLoadSheddingStrategy``, ``loadBalancerLoadPlacementStrategy``), as the
    modelled release instantiates them. A building block of :func:`choose`, which decides when
    it serves; ``drain`` builds it directly for its ``selectBroker``."""
    profile = settings.profile
    notes = list(warnings)
    shed_name = SHEDDING.short_name(opts.strategy or settings["loadBalancerLoadSheddingStrategy"])
    place_name = PLACEMENT.short_name(
        opts.placement or settings["loadBalancerLoadPlacementStrategy"])
    if place_name == "AvgShedder" and shed_name != "AvgShedder":
        # ModularLoadManagerImpl refuses to start with this pair.
        raise UsageError(
            "placement AvgShedder needs the AvgShedder shedding strategy (Pulsar uses one instance "
            f"for both); got shedding strategy {shed_name}")
    if "AvgShedder" in (shed_name, place_name) and not profile["avgShedder"]:
        # createLoadSheddingStrategy / ModularLoadManagerStrategy.create: class not found
        notes.append(f"AvgShedder does not exist in Pulsar {profile.version} (it came in 3.0.6, "
                     "3.2.4, 3.3.1, 4.0.0): ModularLoadManagerImpl falls back to OverloadShedder "
                     "for shedding and LeastLongTermMessageRate for placement")
        shed_name = "OverloadShedder" if shed_name == "AvgShedder" else shed_name
        place_name = ("LeastLongTermMessageRate" if place_name == "AvgShedder" else place_name)
    elif place_name == "AvgShedder" \
            and profile["avgShedderBindKey"] == "loadBalancerPlacementStrategy":
        other = str(settings["loadBalancerPlacementStrategy"]).rsplit(".", 1)[-1]
        if other != "AvgShedder":
            raise UsageError(
                f"Pulsar {profile.version} checks AvgShedder against loadBalancerPlacementStrategy "
                f"(PR #23156), which is {settings['loadBalancerPlacementStrategy']!r}: "
                "ModularLoadManagerImpl refuses to start and Pulsar falls back to "
                "SimpleLoadManagerImpl (run without --strategy/--placement to model it); set "
                "loadBalancerPlacementStrategy to AvgShedder's class name as well")
    if shed_name == "ThresholdShedder" and settings["lowerBoundarySheddingEnabled"] \
            and not profile["lowerBoundaryShedding"]:
        notes.append(f"lowerBoundarySheddingEnabled is ignored: Pulsar {profile.version} has no "
                     "lower-boundary shedding (it came in 2.11.0)")
    return ModularLoadManager(
        SHEDDING.create(shed_name),
        PLACEMENT.create(place_name),
        PLACEMENT.create("RoundRobinBrokerSelector"),
        seed=opts.seed,
        check_splits=check_splits,
        warnings=notes,
    )


def extensible_load_manager(opts: Options, settings: Settings | None = None,
                            warnings: Sequence[str] = ()) -> ExtensibleLoadManager:
    """The extensible load manager (its placement is fixed: a different ``--placement`` is an
    error; it needs Pulsar 3.0, checked when ``settings`` are given). A building block of
    :func:`choose`; ``drain`` builds it directly for its placement."""
    if opts.placement and PLACEMENT.short_name(opts.placement) != EXT_PLACEMENT:
        raise UsageError(f"the extensible load manager places with {EXT_PLACEMENT} only; got "
                         f"--placement {opts.placement}")
    if settings is not None and not settings.profile["extensible"]:
        raise UsageError(f"Pulsar {settings.profile.version} has no extensible load manager "
                         "(PIP-192 and TransferShedder came in 3.0.0)")
    from lbctl.loadmanager.extensible import ExtensibleLoadManager

    return ExtensibleLoadManager(seed=opts.seed, warnings=warnings)


def choose(states: Sequence[ClusterState], opts: Options, settings: Settings, *,
           warnings: Sequence[str] = (), simulating: bool = False,
           own: Own | None = None) -> LoadManager[Any]:
    """The load manager that serves a request (module docstring), with the settings it starts
    with (the last snapshot's; the simulator's first one) and the warnings its plans say.

    ``own``: lbctl's own load manager, when the command offers it under its strategy name.
    ``simulating``: the simulator's loop, whose load model moves the brokers' reports: a modular
    snapshot runs the modular load manager with whatever shedder is named, its
    ``checkNamespaceBundleSplit`` included (the simulator carries its splits out:
    :mod:`lbctl.simulate.engine`), and the extensible driver models TransferShedder whatever
    release the settings name.
    """
    if own is not None and own.named(opts.strategy):
        if opts.placement:
            raise UsageError(f"{own.title} chooses destinations itself: --placement does not "
                             f"apply to --strategy {own.name}")
        return own.build()
    simple = simple_reason(states, settings, opts)
    if simple is not None:
        from lbctl.loadmanager.simple import SimpleLoadManager

        return SimpleLoadManager(settings, seed=opts.seed,
                                 warnings=[*warnings, *([simple] if simple else [])])
    extensible = uses_extensible(states, opts)
    if simulating:
        extensible = extensible and kind_of(states) == EXTENSIBLE
    if extensible:
        return extensible_load_manager(opts, None if simulating else settings, warnings)
    return modular_load_manager(settings, opts, warnings=warnings)


#: the load manager classes Pulsar ships (any other name is a class Pulsar cannot create here)
SIMPLE_CLASS = "org.apache.pulsar.broker.loadbalance.impl.SimpleLoadManagerImpl"
KNOWN_CLASSES = (
    "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl",
    SIMPLE_CLASS,
    "org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl",
)


def falls_back(class_name: object) -> str | None:
    """Why Pulsar would run ``SimpleLoadManagerImpl`` for this ``loadManagerClassName``
    (``LoadManager.create``: a blank name gives it; a class it cannot create falls back to it;
    ``""``: named), or ``None`` when it runs the class named."""
    if not isinstance(class_name, str) or not class_name.strip():
        return "loadManagerClassName is blank: Pulsar uses SimpleLoadManagerImpl"
    name = class_name.strip()
    if name == SIMPLE_CLASS:
        return ""
    if name in KNOWN_CLASSES:
        return None
    return (f"loadManagerClassName {name!r} is not a load manager class Pulsar ships: "
            "LoadManager.create fails to create it and falls back to SimpleLoadManagerImpl")


def simple_reason(states: Sequence[ClusterState], settings: Settings,
                  opts: Options) -> str | None:
    """Why ``SimpleLoadManagerImpl`` serves these snapshots (``""``: they were captured on it;
    ``None``: it does not): the snapshots say so, or ``loadManagerClassName`` names it or a class
    Pulsar cannot create (``LoadManager.create`` then falls back to it), or — on the releases whose
    AvgShedder check reads ``loadBalancerPlacementStrategy`` (PR #23156) — the modular load manager
    refuses to start. ``--strategy``/``--placement`` ask for the modular (or extensible) load
    manager with those strategies instead, on the same reports: what switching would do. From
    4.2.3 (``loadManagerFallback``, PR #26031) Pulsar no longer falls back: a class it cannot
    create stops the broker, a ``UsageError`` here."""
    if not states or kind_of(states) == EXTENSIBLE or opts.strategy or opts.placement:
        return None
    if all(st.load_manager == SIMPLE for st in states):
        return ""
    name = settings.peek("loadManagerClassName")
    why = falls_back(name)
    if why is None:
        why = _avg_shedder_refusal(settings)
    blank = not isinstance(name, str) or not name.strip()
    if why and not blank and settings.profile["loadManagerFallback"] == "fail":
        # PR #26031 (4.2.3): LoadManager.create rethrows instead of creating SimpleLoadManagerImpl
        cause = why.split(": ")[0] if why.startswith("loadManagerClassName") else why
        raise UsageError(f"Pulsar {settings.profile.version} does not start the broker: {cause}, "
                         "and since PR #26031 LoadManager.create fails instead of running "
                         "SimpleLoadManagerImpl")
    return why


def _avg_shedder_refusal(settings: Settings) -> str | None:
    """The PR #23156 refusal of :func:`modular_load_manager`, as the reason Pulsar runs
    ``SimpleLoadManagerImpl`` instead."""
    place = PLACEMENT.short_name(settings.peek("loadBalancerLoadPlacementStrategy"))
    other = str(settings.peek("loadBalancerPlacementStrategy")).rsplit(".", 1)[-1]
    if (place == "AvgShedder" and settings.profile["avgShedder"]
            and settings.profile["avgShedderBindKey"] == "loadBalancerPlacementStrategy"
            and other != "AvgShedder"
            and SHEDDING.short_name(settings.peek("loadBalancerLoadSheddingStrategy"))
            == "AvgShedder"):
        return (f"Pulsar {settings.profile.version} checks AvgShedder against "
                f"loadBalancerPlacementStrategy (PR #23156), which is "
                f"{settings.peek('loadBalancerPlacementStrategy')!r}: ModularLoadManagerImpl refuses "
                "to start and Pulsar falls back to SimpleLoadManagerImpl")
    return None


def manager(states: Sequence[ClusterState], opts: Options
            ) -> tuple[LoadManager[Any], list[Settings]]:
    """The load manager that serves these snapshots (:func:`choose`), and each snapshot's
    settings."""
    if not states:
        raise UsageError("no snapshot given")
    settings = resolve_settings(states, opts)
    return choose(states, opts, settings[-1], warnings=version_warnings(states, opts)), settings


def run(states: Sequence[ClusterState], opts: Options) -> list[CycleResult]:
    """Replay the snapshots as successive cycles of the load manager that serves them.

    The cyclic collector stays paused, and what the cycles leave is then frozen, as in
    :func:`plans`: ``explain``'s projection runs more cycles of the last state, and a collection
    after each scanned what the earlier ones made (8-20 % of ``explain``'s CPU at 200,000
    bundles, for no garbage)."""
    with collector_paused(freeze=True):
        lm, settings = manager(states, opts)
        results = lm.run_sequence(states, settings, assume_steady=opts.assume_steady)
        if opts.project:
            results[-1] = project(lm, results[-1])
        return results


def plans(states: Sequence[ClusterState], opts: Options) -> list[Plan]:
    """The plan of every cycle (``recommend --all-cycles``, the fleet replay).

    The cyclic collector stays paused over the cycles and their plans, and what they leave is
    then frozen (:func:`lbctl.collector.collector_paused`), as the snapshots read are: its first
    collection after a cycle otherwise scans every container the cycle made and kept — 0.23 s
    at 1,000,000 bundles, for no garbage — and the next one, while the plans are written out,
    everything again. Reference counting frees all of it as ever."""
    with collector_paused(freeze=True):
        return [r.plan() for r in run(states, opts)]


def stream_manager(headers: Sequence[ClusterState], opts: Options
                   ) -> tuple[LoadManager[Any], Callable[[int], Settings]]:
    """:func:`manager` for a streamed sequence: the same load manager, and the settings of
    snapshot ``i`` made when its cycle runs rather than all up front (a ``Settings`` records the
    keys a cycle reads: 3 kB a snapshot held for the whole replay, issue 30). Each is resolved as
    :func:`resolve_settings` resolves it — ``--broker-conf`` read once, one release for all — and
    the last one is the very object the load manager was chosen with, as in :func:`manager`
    (what the choice read is part of the last plan's ``settings``)."""
    if not headers:
        raise UsageError("no snapshot given")
    conf = read_broker_conf(opts.broker_conf) if opts.broker_conf else {}
    profile, _ = profile_of(headers, opts)
    last = settings_for(headers[-1], opts, conf, profile)
    lm = choose(headers, opts, last, warnings=version_warnings(headers, opts))
    end = len(headers) - 1

    def settings(i: int) -> Settings:
        return last if i == end else settings_for(headers[i], opts, conf, profile)

    return lm, settings


def stream_cycles(headers: Sequence[ClusterState], states: Iterable[ClusterState],
                  opts: Options) -> Iterator[Plan]:
    """Each cycle's plan over a sequence read one snapshot at a time
    (:mod:`lbctl.sources.snapshot_stream`), yielded as it is made: ``headers`` (every snapshot
    without its bundles) choose the load manager, the release and each cycle's settings as
    :func:`run` does from the whole snapshots; ``states`` then come one by one, each cycle's
    result dropped once its plan is made, so the replay holds a snapshot and the one before it
    (the leader's clock), not all. The leader's memory (hit counts, usage history, recently
    unloaded bundles) is carried from cycle to cycle as :func:`run` carries it."""
    lm, settings = stream_manager(headers, opts)
    follower = Follower(lm, assume_steady=opts.assume_steady)
    for i, (st, _) in enumerate(zip(states, headers, strict=True)):
        plan = follower.step(st, settings(i)).plan()
        trim_percent_memo()  # a memo of the figures seen so far, not the leader's memory
        yield plan


def stream_plans(headers: Sequence[ClusterState], states: Iterable[ClusterState],
                 opts: Options) -> list[Plan]:
    """:func:`plans` over a streamed sequence (:func:`stream_cycles`), every plan kept."""
    return list(stream_cycles(headers, states, opts))


def stream_last_plan(headers: Sequence[ClusterState], states: Iterable[ClusterState],
                     opts: Options) -> tuple[int, Plan | None]:
    """:func:`stream_plans` when only the last cycle's plan is printed: how many cycles ran and
    that plan, each earlier plan dropped as soon as the next is made, so that memory stays flat
    however long the sequence (issue 30: keeping every plan took 417 MB at 10k snapshots)."""
    count, last = 0, None
    for plan in stream_cycles(headers, states, opts):
        count, last = count + 1, plan
    return count, last


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
            return  # no options to check it against; its release is not checked here
        for st, settings in zip(states, resolve_settings(states, opts), strict=True):
            try:
                choose(states, opts, settings)
            except LbctlError as e:
                raise SnapshotFormatError(st.source or st.cluster, "config",
                                          f"{e} (recommend would refuse it)") from None
    except SnapshotFormatError:
        raise
    except LbctlError as e:
        raise SnapshotFormatError(states[-1].source or states[-1].cluster, "", str(e)) from None


# --- compare's strategy pairs ---------------------------------------------------------------------
#: Pulsar's default loadBalancerLoadPlacementStrategy, short name
DEFAULT_PLACEMENT = str(SETTINGS_BY_NAME["loadBalancerLoadPlacementStrategy"].default).rsplit(".", 1)[-1]


def strategy_pair(item: str, placement: str | None = None,
                  own: Own | None = None) -> tuple[str, str | None]:
    """A ``--strategy NAME`` or ``--strategy NAME:PLACEMENT`` item of ``compare`` → the shedding
    strategy's and the placement strategy's short names (``placement`` when the item names none;
    ``None``: the snapshot's). ``own``'s name takes no placement."""
    shed, sep, place = item.partition(":")
    if not shed.strip() or (sep and not place.strip()):
        raise UsageError(f"--strategy expects NAME or NAME:PLACEMENT, got {item!r}")
    if own is not None and own.named(shed):
        if sep:
            raise UsageError(f"{own.title} chooses destinations itself: {item!r} names a "
                             f"placement; give --strategy {own.name}")
        return own.name, None
    place_name = place.strip() if sep else placement
    return SHEDDING.short_name(shed), PLACEMENT.short_name(place_name) if place_name else None


def pair_options(opts: Options, shedding: str, placement: str | None, configured: str,
                 own: Own | None = None) -> Options:
    """The options of one run of ``compare``: a pair without a placement takes ``--placement``,
    else the snapshot's (``configured``) — except that a snapshot configured with AvgShedder as
    placement gives the other shedders Pulsar's default placement (LeastLongTermMessageRate),
    since Pulsar refuses AvgShedder placement with any other shedder. ``own`` places its bundles
    itself: no placement goes with it."""
    if own is not None and own.named(shedding):
        return replace(opts, strategy=shedding, placement=None)
    place = placement or opts.placement
    if place is None and configured == "AvgShedder" and shedding != "AvgShedder":
        place = DEFAULT_PLACEMENT
    return replace(opts, strategy=shedding, placement=place)
