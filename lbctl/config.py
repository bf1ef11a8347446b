"""Pulsar's load-balancer settings, declared once, and how their values are resolved.

Each :class:`Setting` mirrors a field of ``org.apache.pulsar.broker.ServiceConfiguration``
(category "Load Balancer" and a few namespace ones): Pulsar's exact name, its Java type, unit and
default. Values resolve with this precedence (highest first)::

    --set key=value  >  dynamic config  >  --broker-conf FILE (broker.conf)
                     >  the snapshot's "config"  >  default

"Dynamic config" is what ``pulsar-admin brokers update-dynamic-config`` stored in the metadata store
(``/admin/configuration``; a snapshot's ``dynamicConfig``, ``GET /admin/v2/brokers/configuration/
values``): ``BrokerService.updateDynamicServiceConfiguration`` sets those fields over the values
``broker.conf`` gave when the broker starts, and its listener on that path does again on every
change, so a stored value beats the file. Only settings whose field is ``@FieldContext(dynamic =
true)`` (:attr:`Setting.dynamic`) take part: ``BrokersBase`` refuses to store any other.

Unknown keys are errors that suggest the closest known name; values are parsed like Pulsar's
``PulsarConfigurationLoader`` (``true``/``false``, numbers, comma-separated lists).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

from msgspec import Struct

from lbctl.errors import ConfigError, UsageError
from lbctl.records import replace
from lbctl.versions import Profile, newest

IMPL = "org.apache.pulsar.broker.loadbalance.impl."
MB = 1024 * 1024


class Range(Struct, frozen=True):
    """The values a numeric setting may take: ``low`` and ``high`` inclusive (``None``: open).

    Pulsar's ``@FieldContext`` declares ``minValue``/``maxValue`` on none of the load-balancer
    fields (``ServiceConfiguration``, category "Load Balancer"): Pulsar accepts any number of the
    field's Java type. The ranges here are those in which a setting means what Pulsar's code does
    with it — a percentage compared with a usage in %, a weight multiplying one, a fraction of a
    difference, a delay or an age that must be positive; ``why`` says which (``lbctl doctor``'s
    ``setting-out-of-range`` rule reads it)."""

    low: float | None
    high: float | None
    why: str

    def contains(self, value: float) -> bool:
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def __str__(self) -> str:
        def num(x: float) -> str:
            return str(int(x)) if float(x).is_integer() else str(x)

        if self.low is not None and self.high is not None:
            return f"[{num(self.low)}, {num(self.high)}]"
        if self.low is not None:
            return f">= {num(self.low)}"
        return f"<= {num(self.high)}" if self.high is not None else "any"


#: the ranges the settings below use
PERCENT = Range(0, 100, "a percentage compared with a resource usage in %")
WEIGHT = Range(0, None, "a weight multiplying a resource usage (a negative one turns the usage "
                        "negative, so the weighted max ignores that resource)")
NON_NEGATIVE = Range(0, None, "a threshold or count: a negative value is below any figure")


class Setting(Struct, frozen=True):
    """One ``ServiceConfiguration`` field: name, Java type, default, unit and what it does;
    ``dynamic``: ``@FieldContext(dynamic = true)`` (``pulsar-admin brokers update-dynamic-config``
    changes it without a restart); ``valid``: the values that make sense (:class:`Range`)."""

    name: str
    type: str  # "boolean" | "int" | "long" | "double" | "string" | "list" | "set"
    default: Any
    unit: str
    doc: str
    deprecated_by: str | None = None
    dynamic: bool = False
    valid: Range | None = None

    def parse(self, raw: Any) -> Any:
        """Convert a value from a file or the command line to this setting's type."""
        try:
            return _PARSERS[self.type](raw)
        except (ValueError, TypeError):
            raise ConfigError(
                f"setting {self.name}: expected {_TYPE_WORDS[self.type]}, got {raw!r}"
            ) from None


def _bool(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in ("true", "false"):
        return raw.strip().lower() == "true"
    raise ValueError(raw)


def _integer(raw: Any) -> int:
    if isinstance(raw, bool):
        raise TypeError(raw)
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if isinstance(raw, str):
        return int(_java_number(raw))
    raise TypeError(raw)


#: what Java's ``String.trim`` removes: every character up to the space (controls included)
_JAVA_BLANKS = "".join(map(chr, range(33)))


def _java_number(raw: str) -> str:
    """``raw`` trimmed as Pulsar's ``FieldParser`` (pulsar-common,
    ``org.apache.pulsar.common.util``, ``stringToInteger``/``stringToDouble`` at 00855f5b) trims a
    setting before ``Integer.valueOf`` or ``Double.valueOf``, refusing what only Python's
    ``int``/``float`` would take: ``1_000``
    (digit separators: ``NumberFormatException`` in Java, 1000 in Python, hostile20) and
    blanks Java keeps (a no-break space)."""
    text = raw.strip(_JAVA_BLANKS)
    if "_" in text or text != text.strip():
        raise ValueError(raw)
    return text


def _int(raw: Any) -> int:
    """A Java ``int``: ``Integer.parseInt`` rejects values outside 32 bits."""
    value = _integer(raw)
    if not -(2**31) <= value < 2**31:
        raise ValueError(raw)
    return value


def _long(raw: Any) -> int:
    """A Java ``long`` (64 bits)."""
    value = _integer(raw)
    if not -(2**63) <= value < 2**63:
        raise ValueError(raw)
    return value


def _double(raw: Any) -> float:
    if isinstance(raw, bool):
        raise TypeError(raw)
    if isinstance(raw, int | float | str):
        text = _java_number(raw) if isinstance(raw, str) else raw
        if isinstance(text, str) and not text.isascii():
            raise ValueError(raw)  # Double.valueOf reads ASCII digits only (int: any digit)
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(raw)
        return value
    raise TypeError(raw)


def _string(raw: Any) -> str:
    if isinstance(raw, str):
        return raw.strip()
    raise TypeError(raw)


def _list(raw: Any) -> tuple[str, ...]:
    if isinstance(raw, list | tuple | set | frozenset):
        return tuple(str(x).strip() for x in raw if str(x).strip())
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("[") and text.endswith("]"):  # runtime config prints sets as [a, b]
            text = text[1:-1]
        return tuple(x.strip() for x in text.split(",") if x.strip())
    raise TypeError(raw)


def _set(raw: Any) -> tuple[str, ...]:
    """A ``Set<String>`` field (Pulsar declares them as ``TreeSet``): sorted, without duplicates."""
    return tuple(sorted(set(_list(raw))))


_PARSERS = {
    "boolean": _bool,
    "int": _int,
    "long": _long,
    "double": _double,
    "string": _string,
    "list": _list,
    "set": _set,
}
_TYPE_WORDS = {
    "boolean": "true or false",
    "int": "an integer (32-bit)",
    "long": "an integer (64-bit)",
    "double": "a finite number",
    "string": "a string",
    "list": "a comma-separated list",
    "set": "a comma-separated list",
}

_SPLIT_ALGORITHMS = (
    "range_equally_divide",
    "topic_count_equally_divide",
    "specified_positions_divide",
    "flow_or_qps_equally_divide",
)

SETTINGS: tuple[Setting, ...] = (
    # --- the load manager and its cycle ---------------------------------------------------
    Setting("loadBalancerEnabled", "boolean", True, "", "Enable the load balancer."),
    Setting("loadManagerClassName", "string", IMPL + "ModularLoadManagerImpl", "",
            "Load manager implementation (modular, extensible or simple; a class Pulsar cannot "
            "create runs SimpleLoadManagerImpl, or stops the broker from 4.0.12 and 4.2.3 "
            "on, PR #26031)."),
    Setting("loadBalancerSheddingEnabled", "boolean", True, "", "Enable load shedding."),
    Setting("loadBalancerSheddingIntervalMinutes", "int", 1, "minutes",
            "Interval between load-shedding cycles."),
    Setting("loadBalancerSheddingGracePeriodMinutes", "long", 30, "minutes",
            "A bundle unloaded less than this long ago is not shed again."),
    Setting("loadBalancerSheddingExcludedNamespaces", "set", (), "",
            "Namespaces never shed; their bundles are placed round-robin."),
    Setting("loadBalancerLoadSheddingStrategy", "string", IMPL + "ThresholdShedder", "",
            "Shedding strategy class of the modular load manager."),
    Setting("loadBalancerLoadPlacementStrategy", "string", IMPL + "LeastLongTermMessageRate", "",
            "Placement strategy class of the modular load manager."),
    Setting("loadBalancerPlacementStrategy", "string", "leastLoadedServer", "",
            "SimpleLoadManagerImpl's placement: leastLoadedServer, leastMsgPerSecond, else "
            "weightedRandomSelection (read by mistake for AvgShedder by some 3.x releases, "
            "PR #23156)."),
    Setting("loadBalancerReportUpdateThresholdPercentage", "int", 10, "percent",
            "A broker rewrites its load report when a figure changed by more than this."),
    Setting("loadBalancerReportUpdateMaxIntervalMinutes", "int", 15, "minutes",
            "A broker rewrites its load report at least this often."),
    Setting("loadBalancerMaxNumberOfBundlesInBundleLoadReport", "int", 10, "bundles",
            "Top bundles per broker persisted as bundle data (<= 0: all)."),
    # --- placement filters -------------------------------------------------------------------
    Setting("loadBalancerDistributeBundlesEvenlyEnabled", "boolean", True, "",
            "Before placement keep only the brokers owning the fewest bundles of the namespace."),
    Setting("loadBalancerBrokerMaxTopics", "int", 50000, "topics",
            "Brokers with more topics are not candidates for placement."),
    Setting("loadBalancerBrokerOverloadedThresholdPercentage", "int", 85, "percent",
            "Usage above which a broker is overloaded (OverloadShedder, placement)."),
    # --- SimpleLoadManagerImpl (deprecated in ServiceConfiguration, still read by it) ---------
    Setting("loadBalancerBrokerUnderloadedThresholdPercentage", "int", 50, "percent",
            "SimpleLoadManagerImpl places on an idle broker once the least loaded is above this."),
    Setting("loadBalancerBrokerComfortLoadLevelPercentage", "int", 65, "percent",
            "SimpleLoadManagerImpl sheds only when a candidate is below this on every resource."),
    # --- resource weights --------------------------------------------------------------------
    Setting("loadBalancerCPUResourceWeight", "double", 1.0, "",
            "Weight of CPU usage in the weighted max resource usage."),
    Setting("loadBalancerMemoryResourceWeight", "double", 0.0, "",
            "Weight of JVM heap usage (deprecated 5-argument usage only).",
            deprecated_by="loadBalancerDirectMemoryResourceWeight"),
    Setting("loadBalancerDirectMemoryResourceWeight", "double", 0.0, "",
            "Weight of direct memory usage in the weighted max resource usage."),
    Setting("loadBalancerBandwidthInResourceWeight", "double", 1.0, "",
            "Weight of inbound bandwidth usage in the weighted max resource usage."),
    Setting("loadBalancerBandwidthOutResourceWeight", "double", 1.0, "",
            "Weight of outbound bandwidth usage in the weighted max resource usage."),
    Setting("loadBalancerBandwithInResourceWeight", "double", 1.0, "",
            "Deprecated misspelt key, read when loadBalancerBandwidthInResourceWeight is 1.0.",
            deprecated_by="loadBalancerBandwidthInResourceWeight"),
    Setting("loadBalancerBandwithOutResourceWeight", "double", 1.0, "",
            "Deprecated misspelt key, read when loadBalancerBandwidthOutResourceWeight is 1.0.",
            deprecated_by="loadBalancerBandwidthOutResourceWeight"),
    Setting("loadBalancerHistoryResourcePercentage", "double", 0.9, "fraction",
            "Weight of history in the usage average (ThresholdShedder, LeastResourceUsageWithWeight)."),
    # --- ThresholdShedder ---------------------------------------------------------------------
    Setting("loadBalancerBrokerThresholdShedderPercentage", "int", 10, "percent",
            "ThresholdShedder sheds brokers this far above the average usage."),
    Setting("loadBalancerBundleUnloadMinThroughputThreshold", "double", 10.0, "MB",
            "ThresholdShedder does not shed a broker for less than this throughput."),
    Setting("lowerBoundarySheddingEnabled", "boolean", False, "",
            "ThresholdShedder also sheds when some broker is far below the average."),
    # --- LeastResourceUsageWithWeight ---------------------------------------------------------
    Setting("loadBalancerAverageResourceUsageDifferenceThresholdPercentage", "int", 10, "percent",
            "Placement prefers brokers this far below the candidates' mean usage."),
    # --- UniformLoadShedder / AvgShedder ------------------------------------------------------
    Setting("loadBalancerMsgRateDifferenceShedderThreshold", "double", 50.0, "percent",
            "UniformLoadShedder: message-rate difference between max and min broker."),
    Setting("loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold", "double", 4.0, "ratio",
            "UniformLoadShedder: throughput ratio between max and min broker."),
    Setting("maxUnloadPercentage", "double", 0.2, "fraction",
            "Fraction of the difference between two brokers to move."),
    Setting("minUnloadMessage", "int", 1000, "msg/s",
            "Do not unload for a message-rate difference below this."),
    Setting("minUnloadMessageThroughput", "int", 1048576, "bytes/s",
            "Do not unload for a throughput difference below this."),
    Setting("maxUnloadBundleNumPerShedding", "int", -1, "bundles",
            "UniformLoadShedder: bundles unloaded per cycle (-1: no limit)."),
    Setting("loadBalancerAvgShedderLowThreshold", "int", 15, "percent",
            "AvgShedder: score gap that counts towards the low hit count."),
    Setting("loadBalancerAvgShedderHighThreshold", "int", 40, "percent",
            "AvgShedder: score gap that counts towards the high hit count."),
    Setting("loadBalancerAvgShedderHitCountLowThreshold", "int", 8, "cycles",
            "AvgShedder: consecutive low-gap hits before shedding."),
    Setting("loadBalancerAvgShedderHitCountHighThreshold", "int", 2, "cycles",
            "AvgShedder: consecutive high-gap hits before shedding."),
    Setting("atLeastOneBundleSelected", "boolean", True, "",
            "Select at least one bundle when shedding (declared by Pulsar; no reader found)."),
    # --- bundle split -------------------------------------------------------------------------
    Setting("loadBalancerAutoBundleSplitEnabled", "boolean", True, "", "Split hot bundles automatically."),
    Setting("loadBalancerAutoUnloadSplitBundlesEnabled", "boolean", True, "",
            "Unload the children of an automatic split."),
    Setting("loadBalancerNamespaceBundleMaxTopics", "int", 1000, "topics",
            "Split a bundle with more topics."),
    Setting("loadBalancerNamespaceBundleMaxSessions", "int", 1000, "sessions",
            "Split a bundle with more producers + consumers (<= 0 disables)."),
    Setting("loadBalancerNamespaceBundleMaxMsgRate", "int", 30000, "msg/s",
            "Split a bundle with a higher long-term message rate."),
    Setting("loadBalancerNamespaceBundleMaxBandwidthMbytes", "int", 100, "MB/s",
            "Split a bundle with a higher long-term throughput."),
    Setting("loadBalancerNamespaceMaximumBundles", "int", 128, "bundles",
            "No automatic split beyond this many bundles in a namespace."),
    Setting("flowOrQpsDifferenceThresholdPercentage", "int", 10, "percent",
            "flow_or_qps_equally_divide: margin over the bundle limits."),
    Setting("defaultNamespaceBundleSplitAlgorithm", "string", "range_equally_divide", "",
            "Split algorithm used when none is given."),
    Setting("supportedNamespaceBundleSplitAlgorithms", "list", _SPLIT_ALGORITHMS, "",
            "Split algorithms the broker accepts."),
    Setting("defaultNumberOfNamespaceBundles", "int", 4, "bundles", "Bundles of a new namespace."),
    Setting("topicBundleAssignmentStrategy", "string",
            "org.apache.pulsar.common.naming.ConsistentHashingTopicBundleAssigner", "",
            "How topics map to bundles (CRC-32 of the full name)."),
    # --- extensible load manager (PIP-192; lbctl/extensible) ----------------------------------
    Setting("loadBalancerDebugModeEnabled", "boolean", False, "",
            "Extensible LB debug mode; TransferShedder counts swapped-back traffic only when on."),
    Setting("loadBalancerBrokerLoadTargetStd", "double", 0.25, "load",
            "TransferShedder sheds while the std of brokers' load exceeds this."),
    Setting("loadBalancerSheddingConditionHitCountThreshold", "int", 3, "cycles",
            "TransferShedder sheds once its condition held more cycles in a row than this."),
    Setting("loadBalancerTransferEnabled", "boolean", True, "",
            "TransferShedder transfers to a chosen broker (on) or unloads to the next lookup."),
    Setting("loadBalancerMaxNumberOfBrokerSheddingPerCycle", "int", 3, "brokers",
            "TransferShedder: brokers shed per cycle."),
    Setting("loadBalanceSheddingDelayInSeconds", "long", 180, "seconds",
            "TransferShedder cool-down after a broker's last unload."),
    Setting("loadBalancerBrokerLoadDataTTLInSeconds", "long", 1800, "seconds",
            "TransferShedder ignores broker load data older than this."),
    Setting("loadBalancerSheddingBundlesWithPoliciesEnabled", "boolean", False, "",
            "Extensible LB may shed bundles with isolation or anti-affinity policies."),
    Setting("loadBalancerReportUpdateMinIntervalMillis", "int", 5000, "ms",
            "Extensible LB reporters sample (and advance the load EMA) this often."),
    Setting("loadBalancerSplitIntervalMinutes", "int", 1, "minutes",
            "Extensible split scheduler: interval between every broker's split checks."),
    Setting("loadBalancerMaxNumberOfBundlesToSplitPerCycle", "int", 10, "bundles",
            "Extensible split strategy: splits per cycle."),
    Setting("loadBalancerNamespaceBundleSplitConditionHitCountThreshold", "int", 3, "cycles",
            "Extensible split strategy splits once a bundle was hot more cycles than this."),
    Setting("preferLaterVersions", "boolean", False, "",
            "Broker version filter: place only on the newest broker version."),
    Setting("failureDomainsEnabled", "boolean", False, "",
            "Anti-affinity placement first spreads a group over failure domains."),
)

#: ``@FieldContext(dynamic = true)`` fields (ServiceConfiguration, apache/pulsar 0023b937); the
#: others need a restart. ``failureDomainsEnabled`` is dynamic too (category "Server"), and so is
#: ``loadBalancerSheddingExcludedNamespaces`` (PIP-380 declares it so). Not dynamic:
#: ``loadBalancerEnabled``, ``loadBalancerLoadPlacementStrategy``, ``lowerBoundarySheddingEnabled``,
#: ``topicBundleAssignmentStrategy`` and SimpleLoadManagerImpl's deprecated fields.
_DYNAMIC = frozenset({
    "failureDomainsEnabled", "loadBalancerSheddingExcludedNamespaces",
    "loadManagerClassName", "loadBalancerSheddingEnabled", "loadBalancerSheddingIntervalMinutes",
    "loadBalancerSheddingGracePeriodMinutes", "loadBalancerLoadSheddingStrategy",
    "loadBalancerReportUpdateThresholdPercentage", "loadBalancerReportUpdateMaxIntervalMinutes",
    "loadBalancerMaxNumberOfBundlesInBundleLoadReport", "loadBalancerDistributeBundlesEvenlyEnabled",
    "loadBalancerBrokerMaxTopics", "loadBalancerBrokerOverloadedThresholdPercentage",
    "loadBalancerCPUResourceWeight", "loadBalancerMemoryResourceWeight",
    "loadBalancerDirectMemoryResourceWeight", "loadBalancerBandwidthInResourceWeight",
    "loadBalancerBandwidthOutResourceWeight", "loadBalancerBandwithInResourceWeight",
    "loadBalancerBandwithOutResourceWeight", "loadBalancerHistoryResourcePercentage",
    "loadBalancerBrokerThresholdShedderPercentage", "loadBalancerBundleUnloadMinThroughputThreshold",
    "loadBalancerAverageResourceUsageDifferenceThresholdPercentage",
    "loadBalancerMsgRateDifferenceShedderThreshold",
    "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold", "maxUnloadPercentage",
    "minUnloadMessage", "minUnloadMessageThroughput", "maxUnloadBundleNumPerShedding",
    "loadBalancerAvgShedderLowThreshold", "loadBalancerAvgShedderHighThreshold",
    "loadBalancerAvgShedderHitCountLowThreshold", "loadBalancerAvgShedderHitCountHighThreshold",
    "atLeastOneBundleSelected", "loadBalancerAutoBundleSplitEnabled",
    "loadBalancerAutoUnloadSplitBundlesEnabled", "loadBalancerNamespaceBundleMaxTopics",
    "loadBalancerNamespaceBundleMaxSessions", "loadBalancerNamespaceBundleMaxMsgRate",
    "loadBalancerNamespaceBundleMaxBandwidthMbytes", "loadBalancerNamespaceMaximumBundles",
    "flowOrQpsDifferenceThresholdPercentage", "defaultNamespaceBundleSplitAlgorithm",
    "supportedNamespaceBundleSplitAlgorithms", "loadBalancerDebugModeEnabled",
    "loadBalancerBrokerLoadTargetStd", "loadBalancerSheddingConditionHitCountThreshold",
    "loadBalancerTransferEnabled", "loadBalancerMaxNumberOfBrokerSheddingPerCycle",
    "loadBalanceSheddingDelayInSeconds", "loadBalancerBrokerLoadDataTTLInSeconds",
    "loadBalancerSheddingBundlesWithPoliciesEnabled", "loadBalancerReportUpdateMinIntervalMillis",
    "loadBalancerMaxNumberOfBundlesToSplitPerCycle",
    "loadBalancerNamespaceBundleSplitConditionHitCountThreshold", "preferLaterVersions",
})

#: ``LoadSheddingTask`` reschedules itself after each run with ``schedule(this, interval,
#: MINUTES)`` (PR #16408, 2.10.2 / 2.11.1: every modelled release), which runs a delay of 0 or less
#: at once: it is not refused, the leader sheds back to back
_SHEDDING_INTERVAL = Range(1, None, "the delay after which LoadSheddingTask runs again (PR "
                                    "#16408): at 0 or less the leader sheds again at once, "
                                    "without pause")
#: ``SplitScheduler.start`` passes it to ``scheduleAtFixedRate`` as the period (SplitScheduler at
#: 1a5df8f3962d), which refuses one of 0 or less: the split scheduler never runs
_SPLIT_INTERVAL = Range(1, None, "the period of every broker's SplitScheduler "
                                 "(scheduleAtFixedRate): at 0 or less it refuses to schedule, and "
                                 "no bundle is split automatically")
#: ``ModularLoadManagerImpl.needBrokerDataUpdate`` compares a report's age with it
_REPORT_MAX_INTERVAL = Range(1, None, "the age at which needBrokerDataUpdate rewrites a load "
                                      "report anyway: at 0 or less every check rewrites it")
_BUNDLES = Range(1, None, "a number of bundles: a namespace has at least one")
_OPTIONAL_COUNT = Range(-1, None, "a count, or -1 for no limit")

#: the valid range of each numeric setting (see :class:`Range`)
_VALID: dict[str, Range] = {
    "loadBalancerSheddingIntervalMinutes": _SHEDDING_INTERVAL,
    "loadBalancerSheddingGracePeriodMinutes": NON_NEGATIVE,
    "loadBalancerReportUpdateThresholdPercentage": NON_NEGATIVE,
    "loadBalancerReportUpdateMaxIntervalMinutes": _REPORT_MAX_INTERVAL,
    "loadBalancerBrokerMaxTopics": NON_NEGATIVE,
    "loadBalancerBrokerOverloadedThresholdPercentage": PERCENT,
    "loadBalancerBrokerUnderloadedThresholdPercentage": PERCENT,
    "loadBalancerBrokerComfortLoadLevelPercentage": PERCENT,
    "loadBalancerCPUResourceWeight": WEIGHT,
    "loadBalancerMemoryResourceWeight": WEIGHT,
    "loadBalancerDirectMemoryResourceWeight": WEIGHT,
    "loadBalancerBandwidthInResourceWeight": WEIGHT,
    "loadBalancerBandwidthOutResourceWeight": WEIGHT,
    "loadBalancerBandwithInResourceWeight": WEIGHT,
    "loadBalancerBandwithOutResourceWeight": WEIGHT,
    "loadBalancerHistoryResourcePercentage": Range(
        0, 1, "the weight of history in a moving average: above 1 the average diverges, below 0 "
              "it alternates in sign"),
    "loadBalancerBrokerThresholdShedderPercentage": PERCENT,
    "loadBalancerBundleUnloadMinThroughputThreshold": NON_NEGATIVE,
    "loadBalancerAverageResourceUsageDifferenceThresholdPercentage": PERCENT,
    "loadBalancerMsgRateDifferenceShedderThreshold": NON_NEGATIVE,
    "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold": NON_NEGATIVE,
    "maxUnloadPercentage": Range(0, 1, "the fraction of a difference to move"),
    "minUnloadMessage": NON_NEGATIVE,
    "minUnloadMessageThroughput": NON_NEGATIVE,
    "maxUnloadBundleNumPerShedding": _OPTIONAL_COUNT,
    "loadBalancerAvgShedderLowThreshold": PERCENT,
    "loadBalancerAvgShedderHighThreshold": PERCENT,
    "loadBalancerAvgShedderHitCountLowThreshold": NON_NEGATIVE,
    "loadBalancerAvgShedderHitCountHighThreshold": NON_NEGATIVE,
    "loadBalancerNamespaceBundleMaxTopics": NON_NEGATIVE,
    "loadBalancerNamespaceBundleMaxMsgRate": NON_NEGATIVE,
    "loadBalancerNamespaceBundleMaxBandwidthMbytes": NON_NEGATIVE,
    "loadBalancerNamespaceMaximumBundles": _BUNDLES,
    "flowOrQpsDifferenceThresholdPercentage": NON_NEGATIVE,
    "defaultNumberOfNamespaceBundles": _BUNDLES,
    "loadBalancerBrokerLoadTargetStd": NON_NEGATIVE,
    "loadBalancerSheddingConditionHitCountThreshold": NON_NEGATIVE,
    "loadBalancerMaxNumberOfBrokerSheddingPerCycle": NON_NEGATIVE,
    "loadBalanceSheddingDelayInSeconds": NON_NEGATIVE,
    "loadBalancerBrokerLoadDataTTLInSeconds": NON_NEGATIVE,
    "loadBalancerReportUpdateMinIntervalMillis": NON_NEGATIVE,
    "loadBalancerSplitIntervalMinutes": _SPLIT_INTERVAL,
    "loadBalancerMaxNumberOfBundlesToSplitPerCycle": NON_NEGATIVE,
    "loadBalancerNamespaceBundleSplitConditionHitCountThreshold": NON_NEGATIVE,
}

SETTINGS = tuple(replace(s, dynamic=s.name in _DYNAMIC, valid=_VALID.get(s.name))
                 for s in SETTINGS)
SETTINGS_BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
assert SETTINGS_BY_NAME.keys() >= _DYNAMIC and _VALID.keys() <= SETTINGS_BY_NAME.keys()


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The closest valid name, for "did you mean …?" messages."""
    choices = list(choices)
    lowered = {c.lower(): c for c in choices}
    if name.lower() in lowered:
        return lowered[name.lower()]
    match = difflib.get_close_matches(name, choices, n=1, cutoff=0.5)
    return match[0] if match else None


def unknown_setting(name: str) -> UsageError:
    hint = closest(name, SETTINGS_BY_NAME)
    suffix = f" (did you mean {hint}?)" if hint else ""
    return UsageError(f"unknown setting {name!r}{suffix}")


class Settings(Mapping[str, Any]):
    """Resolved settings. Reading one records its name, so a plan can list what it read.

    ``profile`` is the Pulsar release modelled (:mod:`lbctl.versions`): its defaults replace the
    declared ones where that release differs, and strategies ask it which code variant to run.
    """

    __slots__ = ("_origin", "_profile", "_read", "_values")

    def __init__(self, values: Mapping[str, Any], origin: Mapping[str, str] | None = None,
                 profile: Profile | None = None):
        self._profile = profile or newest()
        self._values = {s.name: s.default for s in SETTINGS}
        self._values.update(self._profile.setting_defaults())
        self._values.update(values)
        self._origin = dict(origin or {})
        for key in self._profile.absent_settings():  # a key the release does not know: ignored
            self._values[key] = SETTINGS_BY_NAME[key].default
            self._origin.pop(key, None)
        self._read: set[str] = set()

    @classmethod
    def defaults(cls, profile: Profile | None = None) -> Settings:
        return cls({}, profile=profile)

    @property
    def profile(self) -> Profile:
        """The Pulsar release whose behaviour these settings model."""
        return self._profile

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            raise unknown_setting(key)
        self._read.add(key)
        return self._values[key]

    def peek(self, key: str) -> Any:
        """A value without recording it as read (lbctl's own checks and notes must not add settings
        to the list a plan says the computation read)."""
        if key not in self._values:
            raise unknown_setting(key)
        return self._values[key]

    def __contains__(self, key: object) -> bool:
        # Mapping's default goes through __getitem__, which raises UsageError (not KeyError) for
        # unknown names and would record known ones as read.
        return key in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def with_values(self, **overrides: Any) -> Settings:
        """A copy with some values replaced (for tests and `--set`)."""
        for k in overrides:
            if k not in SETTINGS_BY_NAME:
                raise unknown_setting(k)
        values = dict(self._values)
        values.update({k: SETTINGS_BY_NAME[k].parse(v) for k, v in overrides.items()})
        origin = dict(self._origin)
        origin.update(dict.fromkeys(overrides, "override"))
        return Settings(values, origin, self._profile)

    def origin(self, key: str) -> str:
        """Where the value came from: default, snapshot, broker.conf, dynamic config or --set."""
        return self._origin.get(key, "default")

    def read_values(self) -> dict[str, Any]:
        """Every setting read so far, with its value, in declaration order."""
        return {s.name: _plain(self._values[s.name]) for s in SETTINGS if s.name in self._read}

    # --- derived values that Pulsar computes from several keys --------------------------------
    def bandwidth_in_weight(self) -> float:
        """``getLoadBalancerBandwidthInResourceWeight()``: the new key unless it is 1.0, then the
        deprecated ``…BandwithIn…`` key unless that is 1.0, else 1.0 (PIP-357, Pulsar 4.0+).
        Before 4.0 only the misspelt key exists: a correctly spelt one is an unknown key."""
        return _weight(self, "loadBalancerBandwidthInResourceWeight",
                       "loadBalancerBandwithInResourceWeight")

    def bandwidth_out_weight(self) -> float:
        return _weight(self, "loadBalancerBandwidthOutResourceWeight",
                       "loadBalancerBandwithOutResourceWeight")

    def weights4(self) -> tuple[float, float, float, float]:
        """(cpu, directMemory, bandwidthIn, bandwidthOut) for ``getMaxResourceUsageWithWeight``."""
        return (
            float(self["loadBalancerCPUResourceWeight"]),
            float(self["loadBalancerDirectMemoryResourceWeight"]),
            self.bandwidth_in_weight(),
            self.bandwidth_out_weight(),
        )

    def memory_weight(self) -> float:
        return float(self["loadBalancerMemoryResourceWeight"])

    def weighted_usage_memory_weight(self) -> float | None:
        """The memory weight ThresholdShedder and LeastResourceUsageWithWeight pass to
        ``getMaxResourceUsageWithWeight``: ``None`` (4-argument form, no JVM heap) from Pulsar
        3.0 on (PR #19559), the memory weight before."""
        if self._profile["weightedUsageWithMemory"]:
            return self.memory_weight()
        return None

    def weighted_usage(self, local: Any) -> float:
        """``getMaxResourceUsageWithWeight`` of a ``LocalBrokerData`` as ThresholdShedder,
        LeastResourceUsageWithWeight and AvgShedder compute it in this release."""
        return float(local.max_resource_usage_with_weight(
            *self.weights4(), memory_weight=self.weighted_usage_memory_weight()))

    def overload_usage(self, local: Any) -> float:
        """The usage compared with ``loadBalancerBrokerOverloadedThresholdPercentage`` by
        OverloadShedder and ``selectBroker``'s post-check: the weighted 4-argument usage from
        Pulsar 4.0 (PIP-358), the unweighted ``getMaxResourceUsage()`` before."""
        if self._profile["overloadUsage"] == "weighted":
            return float(local.max_resource_usage_with_weight(*self.weights4()))
        return float(local.max_resource_usage())


#: what :meth:`Settings.weights4` reads (the deprecated ``…Bandwith…`` keys when the new are 1.0)
WEIGHT_KEYS = ("loadBalancerCPUResourceWeight", "loadBalancerDirectMemoryResourceWeight",
               "loadBalancerBandwidthInResourceWeight", "loadBalancerBandwidthOutResourceWeight",
               "loadBalancerBandwithInResourceWeight", "loadBalancerBandwithOutResourceWeight")


#: what :meth:`Settings.weighted_usage` may read (JVM heap's weight before Pulsar 3.0)
USAGE_KEYS = (*WEIGHT_KEYS, "loadBalancerMemoryResourceWeight")


def _weight(settings: Settings, key: str, deprecated: str) -> float:
    if settings.profile["bandwidthKeys"] == "misspelt":
        return float(settings[deprecated])
    value = float(settings[key])
    if value != 1.0:
        return value
    old = float(settings[deprecated])
    return old if old != 1.0 else 1.0


def _plain(v: Any) -> Any:
    return list(v) if isinstance(v, tuple) else v


def _unseen(text: str) -> str | None:
    """The first character of ``text`` that is a blank other than the ASCII space, a control
    or an invisible format character (``U+00A0 (NO-BREAK SPACE)``), or None."""
    import unicodedata

    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cf", "Zl", "Zp") or (cat == "Zs" and ch != " "):
            return f"U+{ord(ch):04X} ({unicodedata.name(ch, 'a control character')})"
    return None


def parse_assignments(items: Iterable[str]) -> dict[str, str]:
    """``--set key=value`` items → dict; malformed items are usage errors.

    Both sides are trimmed as Java's ``String.trim`` trims (what Pulsar's ``FieldParser`` does
    to a value, pulsar-common ``org.apache.pulsar.common.util.FieldParser`` at 00855f5b): only
    U+0000–U+0020. Python's ``strip`` also took a no-break space, an em space or an ideographic
    space off, so ``--set k=\u00a070`` modelled 70 where the broker's ``Integer.valueOf``
    refuses the value. A blank, control or invisible character left after that trim (in the
    name, or in the value: no setting's value holds one) is one line naming it. Other non-ASCII
    text is left to the setting's parser, which follows Java's: ``Integer.valueOf`` reads
    full-width digits (``７０`` is 70), ``Double.valueOf`` does not."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip(_JAVA_BLANKS)
        if not sep or not key:
            raise UsageError(f"--set expects key=value, got {item!r}")
        value = value.strip(_JAVA_BLANKS)
        for side, text in (("setting name", key), ("value", value)):
            found = _unseen(text)
            if found is not None:
                raise UsageError(f"--set {item!r}: the {side} holds {found}, which Java's "
                                 "String.trim (Pulsar's FieldParser) does not remove; type it "
                                 "again with plain spaces or none")
        out[key] = value
    return out


def read_broker_conf(path: Path) -> dict[str, str]:
    """Read a Pulsar ``broker.conf`` exactly as the broker's ``PulsarConfigurationLoader`` does
    (``java.util.Properties.load``: :mod:`lbctl.properties`; ``key value`` too).

    Keys that are not load-balancer settings lbctl knows are ignored: a broker.conf holds hundreds
    of unrelated settings. A blank value (``key=``) is what Pulsar's ``FieldParser.setEmptyValue``
    makes of it: an empty list or set, and no change (the default stays) for any other type. A
    known key's bad value is the file's error (exit 1) naming the file and the key, found here when
    the file is read, before the command does anything (the broker too refuses to start on it).
    """
    from lbctl.properties import read_properties

    values: dict[str, str] = {}
    for key, value in read_properties(path, "broker.conf").items():
        setting = SETTINGS_BY_NAME.get(key)
        if setting is None:
            continue
        if not value.strip() and setting.type not in ("list", "set"):
            values.pop(key, None)  # blank scalar: Pulsar keeps the default
            continue
        try:
            setting.parse(value)
        except ConfigError as e:
            raise ConfigError(f"{path}: broker.conf: {e}") from None
        values[key] = value
    return values


#: the origin of a value stored with ``update-dynamic-config`` (``explain``'s "where each came from")
DYNAMIC_ORIGIN = "dynamic config"


def resolve(
    snapshot_config: Mapping[str, Any] | None = None,
    broker_conf: Mapping[str, str] | None = None,
    overrides: Mapping[str, str] | None = None,
    *,
    source_names: tuple[str, str] = ("snapshot", "broker.conf"),
    profile: Profile | None = None,
    dynamic_config: Mapping[str, Any] | None = None,
) -> Settings:
    """Merge the layers: overrides > dynamic config > broker.conf > snapshot config > Pulsar's
    defaults (the module docstring says why a dynamic value beats broker.conf).

    ``dynamic_config``: the values stored with ``update-dynamic-config`` (a snapshot's
    ``dynamicConfig``); a key whose setting is not dynamic is ignored there, as the broker
    never stores one. Unknown keys in a snapshot's ``config`` are ignored (brokers report every
    setting they have); unknown keys in ``--set`` are errors that suggest the closest name.
    """
    values: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for layer, label, strict in (
        (snapshot_config or {}, source_names[0], False),
        (broker_conf or {}, source_names[1], False),
        (dynamic_config or {}, DYNAMIC_ORIGIN, False),
        (overrides or {}, "--set", True),
    ):
        for key, raw in layer.items():
            setting = SETTINGS_BY_NAME.get(key)
            if setting is None:
                if strict:
                    raise unknown_setting(key)
                continue
            if raw is None or (label == DYNAMIC_ORIGIN and not setting.dynamic):
                continue
            try:
                values[key] = setting.parse(raw)
            except ConfigError as e:  # a bad --set is the command line's (exit 2), a bad
                # file's value the file's (exit 1), as docs/exit-codes.md says
                raise (UsageError if strict else ConfigError)(f"{label}: {e}") from None
            origin[key] = label
    return Settings(values, origin, profile)


class Layers(Protocol):
    """What a cluster state holds of its settings (:class:`lbctl.model.cluster.ClusterState`):
    the reported (runtime) configuration and the values stored with ``update-dynamic-config``."""

    @property
    def config(self) -> Mapping[str, Any]: ...

    @property
    def dynamic_config(self) -> Mapping[str, Any]: ...


def of_state(state: Layers, broker_conf: Mapping[str, str] | None = None,
             overrides: Mapping[str, str] | None = None, *,
             profile: Profile | None = None) -> Settings:
    """A state's settings: :func:`resolve` over its ``config`` and its ``dynamicConfig`` — the
    one way every command that holds a state (a live read's or a snapshot's) resolves them, so
    that none drops the dynamic layer (a value stored with ``update-dynamic-config`` wins, and
    its origin says so)."""
    return resolve(state.config, broker_conf, overrides, profile=profile,
                   dynamic_config=state.dynamic_config)


def describe(setting: Setting) -> str:
    unit = f" {setting.unit}" if setting.unit else ""
    return f"{setting.name} = {_plain(setting.default)}{unit}"
