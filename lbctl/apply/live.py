"""The live facts a plan is checked against, read once before a run and again between batches.

A :class:`LiveView` is one read of the cluster (the live cluster source,
:mod:`lbctl.sources.cluster`, on the client the run holds): the
active brokers, each bundle's owner (the broker reporting it), each namespace's boundaries, each
broker's load as the load manager compares it (the weighted max resource usage of its report, or
the published ``weightedMaxEMA`` on the extensible load manager), the load-manager class each
broker reports, the bundles each broker gained since its previous report, and the topics of each
bundle (for the lookups that verify a move). Nothing here decides; :mod:`lbctl.apply.validate`
does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lbctl.admin.client import AdminClient
from lbctl.config import DYNAMIC_ORIGIN, Settings, of_state
from lbctl.model.cluster import EXTENSIBLE, ClusterState
from lbctl.sources.base import StateRead


@dataclass
class LiveView:
    cluster: str
    brokers: list[str]
    state: ClusterState
    settings: Settings
    owners: dict[str, str]
    usage: dict[str, float]  # fraction
    load_manager_class: str | None  # the runtime configuration's loadManagerClassName
    broker_class: dict[str, str]  # the class each broker's report names (when it does)
    gains: dict[str, frozenset[str]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _ranges: dict[str, frozenset[tuple[int, int]] | None] = field(default_factory=dict)
    _topics: dict[str, list[str]] | None = None

    @property
    def overload_threshold(self) -> float:
        return float(self.settings["loadBalancerBrokerOverloadedThresholdPercentage"]) / 100.0

    @property
    def threshold_note(self) -> str:
        """``, dynamic config`` when the overload threshold is a value stored with
        ``update-dynamic-config`` (what the brokers run, over broker.conf): a refusal that quotes
        the threshold says so; else nothing."""
        origin = self.settings.origin("loadBalancerBrokerOverloadedThresholdPercentage")
        return f", {DYNAMIC_ORIGIN}" if origin == DYNAMIC_ORIGIN else ""

    def ranges(self, namespace: str) -> frozenset[tuple[int, int]] | None:
        """The namespace's bundle ranges (cached: a plan of many actions checks each once)."""
        cache = self._ranges
        if namespace not in cache:
            bounds = self.state.namespaces.get(namespace)
            cache[namespace] = (None if bounds is None
                                else frozenset(zip(bounds, bounds[1:], strict=False)))
        return cache[namespace]

    def topics_of(self, bundle: str) -> list[str]:
        """The topics the live read found in ``bundle`` (one pass over all topics, cached)."""
        if self._topics is None:
            from lbctl.model.bundle import BundleNameError, locate, topic_hash, topic_namespace

            index: dict[str, list[str]] = {}
            for t in self.state.topics:
                ns = topic_namespace(t)
                bounds = self.state.namespaces.get(ns)
                if bounds is None:
                    continue
                try:
                    rng = locate(bounds, topic_hash(t))
                except BundleNameError:
                    continue
                index.setdefault(f"{ns}/{rng}", []).append(t)
            self._topics = index
        return self._topics.get(bundle, [])

    def overloaded(self) -> dict[str, float]:
        thr = self.overload_threshold
        return {b: u for b, u in self.usage.items() if u >= thr}


def read_live(client: AdminClient, *, topics: bool = True, namespaces: bool = True) -> LiveView:
    """One read of the cluster behind ``client`` (held open by the run)."""
    from lbctl.sources.cluster import on_client

    return view_of(on_client(client, topics=topics, namespaces=namespaces).read())


def view_of(got: StateRead) -> LiveView:
    """What a run checks its actions against, from one read of the live cluster."""
    state = got.last
    settings = of_state(state)  # with the values stored by update-dynamic-config
    return LiveView(
        cluster=state.cluster,
        brokers=list(state.brokers),
        state=state,
        settings=settings,
        owners=state.owners(),
        usage=usage_of(state, settings),
        load_manager_class=_class_of(state),
        broker_class={b: r.loadManagerClassName for b, r in state.brokers.items()
                      if r.loadManagerClassName is not None},
        gains={b: frozenset(d.lastBundleGains) for b, d in state.brokers.items()},
        failures=list(got.failures),
        warnings=list(got.warnings),
    )


def _class_of(state: ClusterState) -> str | None:
    v = state.config.get("loadManagerClassName")
    return v if isinstance(v, str) and v else None


def usage_of(state: ClusterState, settings: Settings) -> dict[str, float]:
    """Each broker's load as the load manager compares it with
    ``loadBalancerBrokerOverloadedThresholdPercentage``."""
    out: dict[str, float] = {}
    if state.load_manager == EXTENSIBLE:
        for b, pub in state.broker_load_data.items():
            out[b] = float(pub.data.weightedMaxEMA)
    weights = settings.weights4()
    for b, local in state.brokers.items():
        if b not in out:
            out[b] = float(local.max_resource_usage_with_weight(*weights))
    return out


def bundle_throughput(state: ClusterState, bundle: str) -> float | None:
    st = state.bundle_stats(bundle)
    return None if st is None else float(st.throughput)

