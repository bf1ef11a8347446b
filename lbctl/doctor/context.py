"""What the rules look at: the cluster's state, its settings as the modelled Pulsar release
resolves them, and what a live read adds (dynamic configuration, each broker's version and load
manager, the brokers that did not answer)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from shlex import quote
from typing import Any

from lbctl.config import DYNAMIC_ORIGIN, SETTINGS_BY_NAME, Settings
from lbctl.model.bundle import namespace_of
from lbctl.model.cluster import EXTENSIBLE, ClusterState
from lbctl.model.load import LocalBrokerData
from lbctl.versions import Profile

IMPL = "org.apache.pulsar.broker.loadbalance.impl."
EXTENSIBLE_CLASS = "org.apache.pulsar.broker.loadbalance.extensions.ExtensibleLoadManagerImpl"
#: namespaces every broker owns a bundle of (heartbeat, SLA monitor): never balanced
_SYSTEM_PREFIXES = ("pulsar/",)


@dataclass(frozen=True)
class BrokerFacts:
    """One broker as the cluster lists it: its version and ``loadManagerClassName`` (from a live
    read of each broker, else from its load report), and whether it leads."""

    broker: str
    version: str | None = None
    load_manager: str | None = None
    leader: bool = False


@dataclass(frozen=True)
class Context:
    """The inputs of every rule (they read, never change it).

    ``states``: the snapshots given (a sequence ends with the state examined); ``settings``: the
    last state's settings (``--set`` > ``--broker-conf`` > its ``config`` > the release's
    defaults); ``dynamic``: the dynamic configuration a live read found (its values are already in
    force, and in ``settings``); ``facts``: per broker; ``unreachable``: what a live read could
    not read, and why; ``files``: the snapshot files as the command was given them, which the
    lbctl commands of a fix name so that a copied command runs as is (a ``.jsonl`` sequence is
    its file: a state's ``source`` is ``FILE:LINE``, which no command reads); ``flags``: the
    settings flags given (``--broker-conf``, ``--set``, ``--pulsar-version``), which compare and
    explain take too, so that they judge the settings doctor judged.
    """

    states: tuple[ClusterState, ...]
    settings: Settings
    dynamic: Mapping[str, str] = field(default_factory=dict)
    facts: tuple[BrokerFacts, ...] = ()
    unreachable: tuple[tuple[str, str], ...] = ()
    live: bool = False
    files: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()

    # --- the state ---------------------------------------------------------------------------
    @property
    def state(self) -> ClusterState:
        return self.states[-1]

    @property
    def profile(self) -> Profile:
        return self.settings.profile

    @property
    def extensible(self) -> bool:
        return self.state.load_manager == EXTENSIBLE

    @property
    def brokers(self) -> Mapping[str, LocalBrokerData]:
        return self.state.brokers

    @cached_property
    def owners(self) -> dict[str, str]:
        return self.state.owners()

    @cached_property
    def namespace_bundle_counts(self) -> dict[str, int]:
        """Every namespace the state knows (its ``namespaces`` section and the owned bundles') →
        its bundle count, as :meth:`ClusterState.namespace_bundle_count` has it (the boundaries
        when captured, else the bundles brokers report), counted in one pass over the owners
        instead of one pass per namespace (issue 30: quadratic without a ``namespaces``
        section)."""
        counts: dict[str, int] = {}
        for bundle in self.owners:
            ns = namespace_of(bundle)
            counts[ns] = counts.get(ns, 0) + 1
        for ns, bounds in self.state.namespaces.items():
            counts[ns] = len(bounds) - 1
        return counts

    def user_bundles(self, broker: str) -> list[str]:
        """The bundles a broker owns outside Pulsar's own namespaces (``pulsar/…``: heartbeat, SLA
        monitor and system namespaces, which every broker or the leader owns by design)."""
        local = self.brokers[broker]
        names = dict.fromkeys([*local.lastStats, *local.bundles])
        return [b for b in names if not is_system(namespace_of(b))]

    # --- settings ----------------------------------------------------------------------------
    def value(self, key: str) -> Any:
        """A setting's value in force (not recorded as read by a strategy)."""
        return self.settings.peek(key)

    def default(self, key: str) -> Any:
        """The modelled release's default of a setting."""
        return Settings.defaults(self.profile).peek(key)

    def is_set(self, key: str) -> bool:
        """Whether a setting differs from the release's default (a live runtime configuration
        lists every key, so where it came from cannot tell)."""
        return bool(self.value(key) != self.default(key))

    def origin(self, key: str) -> str:
        """Where the value came from: dynamic configuration, broker.conf, snapshot, --set, default.
        The settings say so for a value stored with ``update-dynamic-config`` (the live read's or
        the snapshot's ``dynamicConfig`` layer, :func:`lbctl.config.of_state`); a stored key that
        is not dynamic, or a value that cannot be parsed, is not where the value came from."""
        origin = self.settings.origin(key)
        if origin == DYNAMIC_ORIGIN:
            return "dynamic configuration"
        return "runtime configuration" if origin == "snapshot" and self.live else origin

    def stored(self, key: str) -> bool:
        """Whether the dynamic configuration holds ``key`` as a dynamic setting (one
        ``delete-dynamic-config`` can remove: it refuses any other)."""
        setting = SETTINGS_BY_NAME.get(key)
        return key in self.dynamic and setting is not None and setting.dynamic

    def shown(self, key: str) -> str:
        """``key=value (origin)`` for a finding."""
        return f"{key}={plain(self.value(key))} ({self.origin(key)})"

    def set_fix(self, key: str, value: Any) -> str:
        """How to set a setting: ``update-dynamic-config`` for a dynamic one, else broker.conf."""
        text = plain(value)
        setting = SETTINGS_BY_NAME[key]
        if setting.dynamic and key != "loadBalancerLoadSheddingStrategy":
            return (f"`pulsar-admin brokers update-dynamic-config --config {key} --value "
                    f"{quote(text)}` (or {key}={text} in broker.conf)")
        return f"{key}={text} in broker.conf on every broker, then a rolling restart"

    # --- the commands of a fix -----------------------------------------------------------------
    def snapshots(self) -> str:
        """The snapshot arguments of an lbctl command run on what doctor examined: the files
        given, shell-quoted, in order (a sequence replays as doctor read it); ``SNAPSHOT`` when
        none is known (the rules run without a command line)."""
        return " ".join(quote(f) for f in self.files) or "SNAPSHOT"

    def last_snapshot(self) -> str:
        """The one file of a ``--snapshot FILE`` option (``drain``, ``rebalance-after``: the last
        state of a sequence, the one doctor examined)."""
        return quote(self.files[-1]) if self.files else "SNAPSHOT"

    def compare_fix(self, *strategies: str) -> str:
        """``lbctl compare`` of ``strategies`` on the cluster examined. compare replays a history
        and cannot read a live cluster, so after a live read the fix exports it first."""
        flags = " ".join([*(f"--strategy {s}" for s in strategies), *self._settings_flags()])
        if self.live and not self.files:
            return (f"`lbctl snapshot export -f snap.json`, then "
                    f"`lbctl compare snap.json {flags}`")
        return f"`lbctl compare {self.snapshots()} {flags}`"

    def _settings_flags(self) -> list[str]:
        return [quote(f) for f in self.flags]

    def explain_fix(self, flags: str) -> str:
        """``lbctl explain`` with ``flags`` on the cluster examined (a live read: on the live
        cluster again, which explain reads when given no file)."""
        given = "" if self.live and not self.files else f"{self.snapshots()} "
        return f"`lbctl explain {given}{flags}{''.join(' ' + f for f in self._settings_flags())}`"

    def shedder(self) -> str:
        """The shedding strategy's short class name (TransferShedder on the extensible manager)."""
        if self.extensible:
            return "TransferShedder"
        return short(self.value("loadBalancerLoadSheddingStrategy"))

    def placement(self) -> str:
        if self.extensible:
            return "LeastResourceUsageWithWeight"
        return short(self.value("loadBalancerLoadPlacementStrategy"))


def short(name: Any) -> str:
    """``ThresholdShedder`` for ``org.apache.….impl.ThresholdShedder``."""
    return str(name).strip().rsplit(".", 1)[-1]


def plain(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return ",".join(str(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return f"{value:.1f}"
    return str(value)


def is_system(namespace: str) -> bool:
    return namespace.startswith(_SYSTEM_PREFIXES)


def facts_from_state(state: ClusterState) -> tuple[BrokerFacts, ...]:
    """Each broker's version and load manager as its load report says them."""
    return tuple(BrokerFacts(b, local.brokerVersionString, local.loadManagerClassName)
                 for b, local in state.brokers.items())


def make(states: Sequence[ClusterState], settings: Settings, *,
         dynamic: Mapping[str, str] | None = None, facts: Sequence[BrokerFacts] | None = None,
         unreachable: Sequence[tuple[str, str]] = (), live: bool = False,
         files: Sequence[str] = (), flags: Sequence[str] = ()) -> Context:
    st = tuple(states)
    if dynamic is None:  # a snapshot's dynamicConfig (a live read hands its whole answer in)
        dynamic = {k: plain(v) for k, v in st[-1].dynamic_config.items()}
    return Context(st, settings, dict(dynamic),
                   tuple(facts) if facts is not None else facts_from_state(st[-1]),
                   tuple(unreachable), live, tuple(files), tuple(flags))


def listing(items: Sequence[str], limit: int = 5) -> str:
    """``a, b, c`` — at most ``limit`` named, then ``and N more``."""
    items = list(items)
    head = ", ".join(items[:limit])
    return head + (f" and {len(items) - limit} more" if len(items) > limit else "")


def pct(x: float) -> str:
    """A percentage as findings write it: ``92.0 %``."""
    return f"{x:.1f} %"
