"""``lbctl/snapshot@1``, declared once: the records a snapshot file holds, read and written.

A snapshot's parts are Pulsar's own JSON shapes — ``LocalBrokerData`` as
``/admin/v2/broker-stats/load-report`` returns it, ``NamespaceBundleStats``,
``BundleData``/``TimeAverageMessageData``, ``BundlesData``, the extensible load manager's
``BrokerLoadData`` and ``TopBundlesLoadData`` — with lbctl's own sections beside them (topics,
recent unloads, what the leader was observed to do, the placement inputs). Each field carries the
Java type its class declares (:mod:`lbctl.model.wire.java`) and the words an error uses
(:mod:`lbctl.model.wire.problems`); a decode into :class:`Snapshot` checks every type and range in
C. What a type cannot say — bundle-name syntax, one owner per bundle, boundaries that partition
the hash range, a setting's value, aggregates that default to ``LocalBrokerData.update``'s sums —
is checked by :mod:`lbctl.sources.snapshot_schema`, which turns a :class:`Snapshot` into
:class:`~lbctl.model.cluster.ClusterState` and back.

Field order is the order a snapshot is written in. A section or value that a writer leaves out
when it has nothing to say is ``UNSET`` (never written); reading treats it as absent. Unknown keys
are ignored everywhere.
"""


from typing import Annotated, Any, Final, Literal

from msgspec import UNSET, Meta, Struct, UnsetType, field

from lbctl.model.wire.java import (
    INT_MAX,
    EpochMillis,
    JavaDouble,
    JavaIntCount,
    JavaLongCount,
    JavaRate,
)

FORMAT: Final = "lbctl/snapshot@1"
#: the list of rebuilt fields a live capture adds to the extensible sections
RECONSTRUCTED = "reconstructed"
MODULAR: Final = "modular"
EXTENSIBLE: Final = "extensible"
#: the legacy SimpleLoadManagerImpl (brokers serve its LoadReport)
SIMPLE: Final = "simple"

#: a namespace name (``tenant/namespace``, or ``tenant/cluster/namespace`` of older releases)
NAMESPACE_PATTERN = r"^[^/]+/[^/]+(?:/[^/]+)?\Z"
#: a full topic name
TOPIC_PATTERN = r"(?s)^(?:non-)?persistent://[^/]+/[^/]+/.+\Z"
#: a ``Long.decode``-style hex boundary of a namespace's bundles
BOUNDARY_PATTERN = r"^0[xX][0-9a-fA-F]{1,8}\Z"


def _words(**extra: Any) -> Meta:
    return Meta(extra=extra)


# --- names --------------------------------------------------------------------------------------
#: a full bundle name ``tenant/namespace/0xLLLLLLLL_0xUUUUUUUU``; its syntax is checked by the
#: reader, once per distinct namespace and range (a regular expression per name would cost more
#: than the rest of a large snapshot's decode)
BundleNameText = Annotated[str, _words(
    expected="a bundle name tenant/namespace/0xLLLLLLLL_0xUUUUUUUU", bundle_name=True)]
BrokerId = Annotated[str, Meta(min_length=1, extra={"key": "a broker id (host:port) as the key"})]
BrokerKey = Annotated[str, _words(key="a broker id as a string key (quote it)")]
NamespaceKey = Annotated[str, Meta(pattern=NAMESPACE_PATTERN, extra={
    "key": "a namespace name tenant/namespace as the key"})]
TopicKey = Annotated[str, Meta(pattern=TOPIC_PATTERN, extra={
    "key": "a full topic name persistent://tenant/namespace/topic as the key"})]


#: arrays of non-empty strings (the placement sections)
BrokerIds = Annotated[list[Annotated[str, Meta(min_length=1, extra={
    "expected": "broker id, a non-empty string"})]], _words(expected="an array of broker ids")]
NamespaceRegexes = Annotated[list[Annotated[str, Meta(min_length=1, extra={
    "expected": "namespace regex, a non-empty string"})]],
    _words(expected="an array of namespace regexes")]
BrokerRegexes = Annotated[list[Annotated[str, Meta(min_length=1, extra={
    "expected": "broker regex, a non-empty string"})]], _words(expected="an array of broker regexes")]
TopicNames = Annotated[list[Annotated[str, Meta(min_length=1, extra={
    "expected": "full topic name, a non-empty string"})]],
    _words(expected="an array of full topic names")]


# --- Pulsar's load report (LocalBrokerData and its parts) --------------------------------------
class ResourceUsage(Struct, frozen=True, gc=False):
    """``ResourceUsage``: a ``{usage, limit}`` pair (``-1`` after ``reset()``)."""

    usage: JavaDouble = 0.0
    limit: JavaDouble = 0.0


class NamespaceBundleStats(Struct, frozen=True, gc=False):
    """One bundle's latest figures as its owner reports them (``NamespaceBundleStats``).

    Both the wire record and the model's value: a large snapshot's ``lastStats`` decode straight
    into these, validated in C, and are used as they are. A frozen ``Struct``, never tracked by
    the cyclic garbage collector (it holds only numbers) — a large snapshot has one per bundle."""

    msgRateIn: JavaRate = 0.0
    msgThroughputIn: JavaRate = 0.0
    msgRateOut: JavaRate = 0.0
    msgThroughputOut: JavaRate = 0.0
    consumerCount: JavaIntCount = 0
    producerCount: JavaIntCount = 0
    topics: JavaLongCount = 0
    cacheSize: JavaLongCount = 0

    @property
    def msg_rate(self) -> float:
        return self.msgRateIn + self.msgRateOut

    @property
    def throughput(self) -> float:
        return self.msgThroughputIn + self.msgThroughputOut

    def part(self, f: float, messages: float | None = None,
             throughput: float | None = None) -> "NamespaceBundleStats":
        """The part ``f`` of this bundle a split's child carries (lbctl's figure: Pulsar divides
        the hash range, never the figures): its counts rounded, its message and byte rates by
        their own parts when known (the listed topics'), else by ``f``."""
        fm = f if messages is None else messages
        ft = f if throughput is None else throughput
        return NamespaceBundleStats(
            msgRateIn=self.msgRateIn * fm, msgRateOut=self.msgRateOut * fm,
            msgThroughputIn=self.msgThroughputIn * ft, msgThroughputOut=self.msgThroughputOut * ft,
            consumerCount=round(self.consumerCount * f), producerCount=round(self.producerCount * f),
            topics=round(self.topics * f), cacheSize=round(self.cacheSize * f))


Resource = Annotated[ResourceUsage, _words(expected='an object {"usage": number, "limit": number}')]
Stats = Annotated[NamespaceBundleStats, _words(expected="an object (NamespaceBundleStats)")]
StatsMap = Annotated[dict[BundleNameText, Stats], _words(
    expected="an object: bundle name → NamespaceBundleStats")]
BundleNames = Annotated[list[BundleNameText], _words(expected="an array of bundle names")]


class SystemResourceUsage(Struct, frozen=True, gc=False):
    """``SystemResourceUsage``: the five resources nested in ``SimpleLoadManagerImpl``'s
    ``LoadReport`` (the report repeats them at the top level through its getters; a part given
    here wins over the top-level one)."""

    cpu: Resource | UnsetType = UNSET
    memory: Resource | UnsetType = UNSET
    directMemory: Resource | UnsetType = UNSET
    bandwidthIn: Resource | UnsetType = UNSET
    bandwidthOut: Resource | UnsetType = UNSET


class LocalBrokerData(Struct, frozen=True, gc=False):
    """``LocalBrokerData``: a broker's load report.

    The aggregates (rates, throughputs, counts, ``bundles``) are ``UNSET`` when the report leaves
    them out: the reader computes them from ``lastStats`` as ``LocalBrokerData.update`` does.
    ``bundleStats`` is the name older brokers gave ``lastStats``: read (as a :data:`StatsMap`)
    only when ``lastStats`` is absent, never written."""

    cpu: Resource = field(default_factory=ResourceUsage)
    memory: Resource = field(default_factory=ResourceUsage)
    directMemory: Resource = field(default_factory=ResourceUsage)
    bandwidthIn: Resource = field(default_factory=ResourceUsage)
    bandwidthOut: Resource = field(default_factory=ResourceUsage)
    msgThroughputIn: JavaRate | UnsetType = UNSET
    msgThroughputOut: JavaRate | UnsetType = UNSET
    msgRateIn: JavaRate | UnsetType = UNSET
    msgRateOut: JavaRate | UnsetType = UNSET
    numTopics: JavaIntCount | UnsetType = UNSET
    numBundles: JavaIntCount | UnsetType = UNSET
    numConsumers: JavaIntCount | UnsetType = UNSET
    numProducers: JavaIntCount | UnsetType = UNSET
    bundles: BundleNames | UnsetType = UNSET
    lastBundleGains: BundleNames = []
    lastBundleLosses: BundleNames = []
    lastStats: StatsMap | UnsetType = UNSET
    lastUpdate: EpochMillis = 0
    brokerVersionString: Annotated[str | None, _words(expected="a string")] | UnsetType = UNSET
    loadManagerClassName: Annotated[str | None, _words(expected="a string")] | UnsetType = UNSET
    persistentTopicsEnabled: bool = True
    nonPersistentTopicsEnabled: bool = True
    bundleStats: Annotated[Any, _words(read_as=StatsMap)] = UNSET
    #: ``LoadReport`` (SimpleLoadManagerImpl): its nested usage and its ``timestamp`` (read as
    #: ``lastUpdate`` when that is absent); read, never written
    systemResourceUsage: Annotated[SystemResourceUsage, _words(
        expected="an object {cpu, memory, directMemory, bandwidthIn, bandwidthOut}")] \
        | UnsetType = UNSET
    timestamp: EpochMillis | UnsetType = UNSET


# --- BundleData and namespaces -----------------------------------------------------------------
def _max_samples_problem(value: object) -> str | None:
    return "expected an integer > 0" if type(value) is int and value == 0 else None


class TimeAverageMessageData(Struct, frozen=True, gc=False):
    """``TimeAverageMessageData``: a windowed average of a bundle's rates."""

    maxSamples: Annotated[int, Meta(ge=1, le=INT_MAX, extra={
        "explain": _max_samples_problem, "missing": "an integer > 0"})]
    numSamples: JavaIntCount = 0
    msgThroughputIn: JavaRate = 0.0
    msgThroughputOut: JavaRate = 0.0
    msgRateIn: JavaRate = 0.0
    msgRateOut: JavaRate = 0.0


Tamd = Annotated[TimeAverageMessageData, _words(
    expected="an object (TimeAverageMessageData)", missing="a TimeAverageMessageData object")]


class BundleData(Struct, frozen=True, gc=False):
    """``BundleData``: a bundle's short-term and long-term averages."""

    shortTermData: Tamd
    longTermData: Tamd
    topics: JavaLongCount = 0


def _boundary_problem(value: object) -> str:
    hint = " (quote it in YAML)" if type(value) is int else ""
    return f'expected a hex string like "0x40000000"{hint}'


Boundary = Annotated[str, Meta(pattern=BOUNDARY_PATTERN, extra={"explain": _boundary_problem})]


class BundlesData(Struct, frozen=True, gc=False):
    """``BundlesData``: a namespace's bundle boundaries (hex, ascending, 0x0 to 0xffffffff)."""

    boundaries: Annotated[list[Boundary], _words(
        expected='an array of hex strings like "0x00000000"', missing="an array of hex strings")]
    numBundles: JavaIntCount | UnsetType = UNSET


# --- lbctl's sections --------------------------------------------------------------------------
class TopicStats(Struct, frozen=True, gc=False):
    """A topic's rates (``/admin/v2/broker-stats/topics``)."""

    msgRateIn: JavaRate = 0.0
    msgRateOut: JavaRate = 0.0
    msgThroughputIn: JavaRate = 0.0
    msgThroughputOut: JavaRate = 0.0
    producerCount: JavaIntCount = 0
    consumerCount: JavaIntCount = 0


ReconstructedFields = Annotated[list[str], _words(expected="a list of field names", whole=True)]
Published = Annotated[ResourceUsage | None, _words(expected='an object {"usage", "limit"}')]


class BrokerLoadData(Struct, frozen=True, gc=False):
    """``extensions.data.BrokerLoadData`` as a broker publishes it.

    A missing resource (or ``null``) is Java's default; the three features are ``UNSET`` when
    the report lacks them (a hand-made file: the cycle computes them from the sample).
    ``reconstructed`` names the fields a live capture rebuilt rather than read."""

    cpu: Published = None
    memory: Published = None
    directMemory: Published = None
    bandwidthIn: Published = None
    bandwidthOut: Published = None
    msgThroughputIn: JavaRate = 0.0
    msgThroughputOut: JavaRate = 0.0
    msgRateIn: JavaRate = 0.0
    msgRateOut: JavaRate = 0.0
    bundleCount: JavaIntCount = 0
    topics: JavaIntCount = 0
    maxResourceUsage: JavaRate | UnsetType = UNSET
    weightedMaxEMA: JavaRate | UnsetType = UNSET
    msgThroughputEMA: JavaRate | UnsetType = UNSET
    updatedAt: JavaLongCount = 0
    reportedAt: JavaLongCount = 0
    reconstructed: ReconstructedFields | UnsetType = UNSET


class TopBundle(Struct, frozen=True, gc=False):
    """``TopBundlesLoadData.BundleLoadData``."""

    bundleName: BundleNameText
    stats: Stats = field(default_factory=NamespaceBundleStats)


class TopBundlesLoadData(Struct, frozen=True, gc=False):
    """``extensions.data.TopBundlesLoadData``: the top bundles in the published (ascending)
    order."""

    topBundlesLoadData: Annotated[list[Annotated[TopBundle, _words(
        expected="an object {bundleName, stats}")]], _words(expected="a list")] = []
    reconstructed: ReconstructedFields | UnsetType = UNSET


CapturedAt = Annotated[str | EpochMillis, _words(
    expected="an RFC 3339 time (string) or epoch milliseconds (integer)",
    missing="an RFC 3339 time or epoch milliseconds")]
Breakdown = Annotated[dict[Annotated[str, _words(key="a label/reason as a string key (quote it)")],
                           JavaLongCount], _words(expected="an object: label/reason → count",
                                                  dotted=True)]


class ObservedMove(Struct, frozen=True, gc=False):
    bundle: BundleNameText
    source: Annotated[str, _words(expected="a broker id")] = field(name="from")
    destination: Annotated[str, _words(expected="a broker id")] = field(name="to")


class Observed(Struct, frozen=True, gc=False):
    """What the leader did until the next sample (:mod:`lbctl.model.observed`)."""

    until: CapturedAt
    unloadedBundles: JavaLongCount | None | UnsetType = UNSET
    unloadedBrokers: JavaLongCount | None | UnsetType = UNSET
    splitBundles: JavaLongCount | None | UnsetType = UNSET
    unloadBreakdown: Breakdown | UnsetType = UNSET
    splitBreakdown: Breakdown | UnsetType = UNSET
    moves: Annotated[list[Annotated[ObservedMove, _words(expected="an object {bundle, from, to}")]],
                     _words(expected="a list of {bundle, from, to}")] | UnsetType = UNSET
    splits: Annotated[list[BundleNameText], _words(expected="a list of bundle names")] \
        | UnsetType = UNSET
    notes: Annotated[list[str], _words(expected="a list of strings", whole=True)] \
        | UnsetType = UNSET


# --- placement inputs besides load (docs/snapshot-policies.md) ---------------------------------
class AutoFailoverPolicy(Struct, frozen=True, gc=False):
    """``AutoFailoverPolicyData``: lbctl knows ``min_available`` (``policyType`` is its older
    name); the parameters are strings ``Integer.parseInt`` reads."""

    policy_type: Annotated[Literal["min_available"], _words(expected='"min_available"')] \
        | UnsetType = UNSET
    parameters: Annotated[dict[str, Any], _words(expected="an object of strings")] = {}
    policyType: Annotated[Literal["min_available"], _words(expected='"min_available"')] \
        | UnsetType = UNSET


class IsolationPolicy(Struct, frozen=True, gc=False, kw_only=True):
    """``NamespaceIsolationData`` as ``namespaceIsolationPolicies`` serves it."""

    namespaces: NamespaceRegexes = []
    primary: BrokerRegexes = []
    secondary: Annotated[BrokerRegexes | None, _words(expected="an array of broker regexes")] = None
    auto_failover_policy: Annotated[AutoFailoverPolicy, _words(
        expected="an object (AutoFailoverPolicyData)",
        missing='{"policy_type": "min_available", "parameters": {"min_limit": "1", '
                '"usage_threshold": "80"}}')]


class FailureDomain(Struct, frozen=True, gc=False):
    brokers: BrokerIds = []


class Policies(Struct, frozen=True, gc=False):
    """Isolation policies (in the served order), anti-affinity groups, failure domains."""

    namespaceIsolationPolicies: Annotated[
        dict[Annotated[str, _words(key="a policy name as a string key (quote it)")],
             Annotated[IsolationPolicy, _words(expected="an object (NamespaceIsolationData)")]],
        _words(expected="an object: policy name → policy")] = {}
    antiAffinityGroups: Annotated[
        dict[NamespaceKey, Annotated[str, _words(expected="the group name, a string")]],
        _words(expected="an object: namespace → anti-affinity group")] = {}
    failureDomains: Annotated[
        dict[Annotated[str, _words(key="a domain name as a string key (quote it)")],
             Annotated[FailureDomain, _words(expected='an object {"brokers": [broker ids]}')]],
        _words(expected='an object: domain name → {"brokers": [...]}')] = {}


class NamespaceTopics(Struct, frozen=True, gc=False):
    """A namespace's topics in metadata, loaded or not, and its partitioned topics."""

    persistent: TopicNames = []
    nonPersistent: TopicNames = []
    partitioned: Annotated[dict[str, JavaIntCount], _words(
        expected="an object: partitioned topic → number of partitions")] = {}


# --- the document ------------------------------------------------------------------------------
def _format_problem(value: object) -> str:
    hint = ""
    if isinstance(value, str) and value.startswith("lbctl/snapshot@"):
        hint = " (this lbctl reads snapshot format version 1)"
    return f'expected "{FORMAT}"{hint}'


#: the sections of a snapshot, each a type of its own (a live read decodes its parts into them)
Config = Annotated[
    dict[Annotated[str, _words(key="a setting name as a string key")],
         Annotated[str | int | JavaDouble | bool | None
                   | list[Annotated[str | int | JavaDouble | bool, _words(
                       expected="a string, number or boolean")]],
                   _words(expected="a string, number or boolean")]],
    _words(expected="an object of broker settings (name → value)", dotted=True)]
Brokers = Annotated[
    dict[BrokerId, Annotated[LocalBrokerData, _words(
        expected="an object (the broker's LocalBrokerData)")]],
    _words(expected="an object: broker id → LocalBrokerData",
           missing="an object: broker id → LocalBrokerData")]
BundleDataMap = Annotated[
    dict[BundleNameText, Annotated[BundleData, _words(
        expected="an object (BundleData: shortTermData, longTermData, topics)")]],
    _words(expected="an object: bundle name → BundleData")]
Namespaces = Annotated[
    dict[NamespaceKey, Annotated[BundlesData, _words(
        expected='an object {"boundaries": [...], "numBundles": N}')]],
    _words(expected="an object: tenant/namespace → {boundaries, numBundles}")]
Topics = Annotated[
    dict[TopicKey, Annotated[TopicStats, _words(
        expected="an object (msgRateIn, msgRateOut, msgThroughputIn, msgThroughputOut)")]],
    _words(expected="an object: full topic name → topic stats")]
RecentlyUnloaded = Annotated[dict[BundleNameText, EpochMillis], _words(
    expected="an object: bundle name → epoch milliseconds")]
BrokerLoadDataMap = Annotated[
    dict[BrokerKey, Annotated[BrokerLoadData, _words(expected="an object")]],
    _words(expected="an object: broker id → object")]
TopBundlesMap = Annotated[
    dict[BrokerKey, Annotated[TopBundlesLoadData, _words(expected="an object")]],
    _words(expected="an object: broker id → object")]
RecentlyUnloadedBrokers = Annotated[dict[BrokerKey, EpochMillis], _words(
    expected="an object: broker id → epoch milliseconds")]
ObservedSection = Annotated[Observed | None, _words(
    expected="an object (what the leader did until the next sample)")]
PoliciesSection = Annotated[Policies, _words(
    expected="an object {namespaceIsolationPolicies, antiAffinityGroups, failureDomains}")]
NamespaceTopicsMap = Annotated[
    dict[NamespaceKey, Annotated[NamespaceTopics, _words(
        expected='an object {"persistent": [...], "nonPersistent": [...], '
                 '"partitioned": {topic: partitions}}')]],
    _words(expected="an object: tenant/namespace → its topic lists")]


class ResourceQuota(Struct, frozen=True, gc=False):
    """``ResourceQuota`` (``GET /admin/v2/resource-quotas[/{tenant}/{namespace}/{bundle}]``): what
    ``SimpleLoadManagerImpl`` assumes a bundle needs — msg/s, bytes/s, MB."""

    msgRateIn: JavaDouble = 0.0
    msgRateOut: JavaDouble = 0.0
    bandwidthIn: JavaDouble = 0.0
    bandwidthOut: JavaDouble = 0.0
    memory: JavaDouble = 0.0
    dynamic: bool = True


Quota = Annotated[ResourceQuota, _words(
    expected='an object {"msgRateIn", "msgRateOut", "bandwidthIn", "bandwidthOut", "memory", '
             '"dynamic"}')]


class ResourceQuotas(Struct, frozen=True, gc=False):
    """The quotas in the metadata store (``/loadbalance/resource-quota``) and the dynamic load
    factors (``/loadbalance/settings/load_factor_cpu``, ``load_factor_mem``) that
    ``SimpleLoadManagerImpl`` starts from, and its own auto-split switch
    (``/loadbalance/settings/auto_bundle_split_enabled``, stored as a string); absent parts:
    Pulsar's defaults."""

    default: Quota | UnsetType = UNSET
    bundles: Annotated[dict[BundleNameText, Quota], _words(
        expected="an object: bundle name → ResourceQuota")] = {}
    loadFactorCPU: JavaDouble | UnsetType = UNSET
    loadFactorMemory: JavaDouble | UnsetType = UNSET
    autoBundleSplitEnabled: bool | str | UnsetType = UNSET


ResourceQuotasSection = Annotated[ResourceQuotas, _words(
    expected='an object {"default", "bundles", "loadFactorCPU", "loadFactorMemory", '
             '"autoBundleSplitEnabled"}')]


class Snapshot(Struct, frozen=True, gc=False, kw_only=True):
    """One ``lbctl/snapshot@1`` document (``brokers`` is required: keyword-only fields)."""

    format: Annotated[Literal["lbctl/snapshot@1"], _words(
        explain=_format_problem, missing=f'"{FORMAT}"')]
    cluster: Annotated[str, Meta(min_length=1, extra={
        "expected": "the cluster name, a non-empty string", "missing": "the cluster name, a string"})]
    capturedAt: CapturedAt
    loadManager: Annotated[Literal["modular", "extensible", "simple"], _words(
        expected='"modular", "extensible" or "simple"')] = MODULAR
    config: Config = {}
    #: the values stored with ``pulsar-admin brokers update-dynamic-config``
    #: (``GET /admin/v2/brokers/configuration/values``), which beat broker.conf
    dynamicConfig: Config | UnsetType = UNSET
    brokers: Brokers
    bundleData: BundleDataMap | UnsetType = UNSET
    namespaces: Namespaces | UnsetType = UNSET
    topics: Topics | UnsetType = UNSET
    recentlyUnloaded: RecentlyUnloaded | UnsetType = UNSET
    brokerLoadData: BrokerLoadDataMap | UnsetType = UNSET
    topBundlesLoadData: TopBundlesMap | UnsetType = UNSET
    recentlyUnloadedBrokers: RecentlyUnloadedBrokers | UnsetType = UNSET
    observed: ObservedSection | UnsetType = UNSET
    availableBrokers: BrokerIds | UnsetType = UNSET
    policies: PoliciesSection | UnsetType = UNSET
    namespaceTopics: NamespaceTopicsMap | UnsetType = UNSET
    resourceQuotas: ResourceQuotasSection | UnsetType = UNSET


#: the whole document, with the words for what is not a snapshot object at all
Document = Annotated[Snapshot, _words(expected="a snapshot object at the top level",
                                      key="a top-level key as a string key (quote it)")]
