"""Pulsar version profiles: which defaults and which code variants a given release runs.

An operator runs one Pulsar release, and the load balancer changed from release to release: setting
defaults, the usage figure a strategy compares, which namespaces are never shed, whole strategies.
lbctl answers "what would *my* leader do" by resolving a :class:`Profile` from a version string
(``--pulsar-version``, else the snapshot brokers' ``brokerVersionString``, else :data:`DEFAULT`)
and letting the settings (:class:`lbctl.config.Settings`) and the strategies read it.

Every difference is one :class:`Variant`: a name, what it changes, the Pulsar source it follows, and
the releases that carry the newer behaviour (:class:`Since`). Releases are given per release line,
because Pulsar back-ports fixes to maintained lines: ``Since("3.0.5", "3.2.3", "3.3.0")`` means
3.0.5 and later 3.0.x, 3.2.3 and later 3.2.x, and every release of 3.3 and of every later line; 3.1.x
(between the listed lines, never patched) keeps the older behaviour.

This module is the one place the per-version knowledge lives, so that other commands (a future
``lbctl doctor``) can reuse it; ``docs/versions.md`` carries the table :func:`markdown_table` prints.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from msgspec import Struct, field

# --- versions -------------------------------------------------------------------------------------
_VERSION_RE = re.compile(r"^\s*v?(\d+)\.(\d+)(?:\.(\d+))?")


class Version(Struct, frozen=True, order=True):
    """``major.minor.patch``; anything after the third number (``-SNAPSHOT``, a vendor suffix such
    as ``.5-ds``) is ignored, as it does not change the open-source code a release carries."""

    major: int
    minor: int
    patch: int = 0

    @classmethod
    def parse(cls, text: str) -> Version:
        """``"3.0.2"``, ``"3.0"``, ``"v4.0.1-SNAPSHOT"``; ``ValueError`` when not a version."""
        m = _VERSION_RE.match(text or "")
        if not m:
            raise ValueError(f"not a Pulsar version: {text!r} (expected X.Y or X.Y.Z)")
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))

    @property
    def line(self) -> tuple[int, int]:
        return (self.major, self.minor)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


def has_patch(text: str) -> bool:
    """Whether a version string names a patch release (``3.0.2``) rather than a line (``3.0``)."""
    m = _VERSION_RE.match(text or "")
    return bool(m and m.group(3) is not None)


#: the release lines lbctl has profiles for, each with the newest patch release it knows of
#: (apache/pulsar-site release-notes/versioned: 4.0.14 of 2026-10-05, 4.1.3 of 2026-02-19 and
#: 4.2.5 are the newest notes of their lines; no 4.0.15, 4.1.4, 4.2.6 or 4.3.0 notes exist)
LINES: Mapping[tuple[int, int], Version] = MappingProxyType({
    (2, 10): Version(2, 10, 6),
    (2, 11): Version(2, 11, 4),
    (3, 0): Version(3, 0, 17),
    (3, 1): Version(3, 1, 3),
    (3, 2): Version(3, 2, 4),
    (3, 3): Version(3, 3, 9),
    (4, 0): Version(4, 0, 14),
    (4, 1): Version(4, 1, 3),
    (4, 2): Version(4, 2, 5),
})
#: the newest release lbctl has a profile for
NEWEST = max(LINES.values())
#: the release modelled when neither ``--pulsar-version`` nor the brokers name one: the newest
#: release lbctl has a profile for (labelled ``newest`` in outputs, ``Profile.origin``), as an
#: operator who names no release expects the current one. It moved from 4.1.1 to 4.2.5 when the
#: 4.0.14/4.1.3/4.2 profiles were added; docs/versions.md lists what that changed.
DEFAULT = NEWEST


@dataclass(frozen=True, slots=True)
class Since:
    """The releases that carry a change: the first release on each line that got it.

    A version has the change when its line is listed and it is at or after that line's entry, or
    when its line is newer than every listed line (released after the change reached master).
    """

    first: tuple[Version, ...]

    def __init__(self, *first: str):
        object.__setattr__(self, "first", tuple(sorted(Version.parse(v) for v in first)))

    def __contains__(self, v: object) -> bool:
        if not isinstance(v, Version):
            return False
        for f in self.first:
            if f.line == v.line:
                return v >= f
        return bool(self.first) and v.line > self.first[-1].line

    def __str__(self) -> str:
        return ", ".join(str(f) for f in self.first) + "+"


@dataclass(frozen=True, slots=True)
class Releases:
    """An explicit list of releases (a bug that lived in a few patch releases only); empty for a
    change that only master carries, after the newest release lbctl models."""

    listed: frozenset[Version]

    def __init__(self, *names: str):
        object.__setattr__(self, "listed", frozenset(Version.parse(n) for n in names))

    def __contains__(self, v: object) -> bool:
        return v in self.listed

    def __str__(self) -> str:
        if not self.listed:  # a change only master has: no release lbctl models carries it
            return "no modelled release"
        return "only " + ", ".join(str(v) for v in sorted(self.listed))


# --- what differs -------------------------------------------------------------------------------
class Variant(Struct, frozen=True):
    """One behaviour that differs between releases: ``old`` elsewhere, ``new`` in the releases of
    ``since``. ``source`` cites the Pulsar class, PR or PIP it follows."""

    name: str
    what: str
    since: Since | Releases
    old: Any
    new: Any
    source: str

    def value(self, v: Version) -> Any:
        return self.new if v in self.since else self.old


VARIANTS: tuple[Variant, ...] = (
    # --- setting defaults (ServiceConfiguration) --------------------------------------------
    Variant("memoryWeightDefault",
            "default of loadBalancerMemoryResourceWeight",
            Since("4.0.0"), 1.0, 0.0,
            "ServiceConfiguration; PR #22820 (disable loadBalancerMemoryResourceWeight by default)"),
    Variant("directMemoryWeightDefault",
            "default of loadBalancerDirectMemoryResourceWeight (3.0.x LTS kept 1.0)",
            Since("3.1.1"), 1.0, 0.0,
            "ServiceConfiguration; PR #21168 (disable balancing based on DirectMemory), #22821"),
    # --- which keys and which usage figure ------------------------------------------------------
    Variant("bandwidthKeys",
            "bandwidth weights read from: only the misspelt loadBalancerBandwith{In,Out}"
            "ResourceWeight (old), or the correct spelling falling back to the misspelt one (new)",
            Since("4.0.0"), "misspelt", "both",
            "PIP-357, PR #22824 (ServiceConfiguration.getLoadBalancerBandwidthInResourceWeight)"),
    Variant("weightedUsageWithMemory",
            "ThresholdShedder and LeastResourceUsageWithWeight weigh JVM heap too "
            "(5-argument getMaxResourceUsageWithWeight) (old) or not (new, 4 arguments)",
            Since("3.0.0"), True, False,
            "PR #19559 (LocalBrokerData.getMaxResourceUsageWithWeight without memory)"),
    Variant("overloadUsage",
            "usage OverloadShedder, LeastLongTermMessageRate's overload test and selectBroker's "
            "post-check compare with the overload threshold: unweighted getMaxResourceUsage (old) "
            "or the weighted usage (new)",
            Since("4.0.0"), "unweighted", "weighted",
            "PIP-358, PR #22888 (OverloadShedder, LeastLongTermMessageRate, "
            "ModularLoadManagerImpl)"),
    # --- shedding ---------------------------------------------------------------------------------
    Variant("shedPulsarSystem",
            "modular shedders never shed bundles of pulsar/system (new) or only heartbeat and "
            "SLA-monitor namespaces are excluded (old)",
            Since("2.11.0"), False, True,
            "LoadData.getBundleDataForLoadShedding → NamespaceService.isSystemServiceNamespace "
            "(NamespaceName.SYSTEM_NAMESPACE added by PR #15252)"),
    Variant("namespacePoliciesUnloadCheck",
            "doLoadShedding keeps a bundle whose namespace policies let no broker but its owner "
            "take it (shouldNamespacePoliciesUnload, before the anti-affinity check); before, "
            "only the anti-affinity check could keep a selected bundle",
            Since("2.11.0"), False, True,
            "PR #16476 (ModularLoadManagerImpl.shouldNamespacePoliciesUnload; merged to master "
            "2022-07, after branch-2.10; no cherry-pick or release/2.10.x label)"),
    Variant("sheddingExcludedNamespaces",
            "loadBalancerSheddingExcludedNamespaces (PIP-380) exists: its namespaces are never "
            "shed and are placed round-robin (else the key is unknown to the broker and ignored)",
            Since("4.0.11", "4.1.0"), False, True,
            "PIP-380, PR #23549 (listed in the release notes of 4.0.11 only; pulsar-site's broker "
            "configuration reference has the key for 4.1.x and not for 4.0.x)"),
    Variant("lowerBoundaryShedding",
            "ThresholdShedder's lowerBoundarySheddingEnabled exists",
            Since("2.11.0"), False, True, "PR #17456 (ThresholdShedder.tryLowerBoundaryShedding)"),
    Variant("thresholdLowerBoundaryAverage",
            "the average ThresholdShedder's lower-boundary shedding compares with: computed again, "
            "smoothing every broker's usage a second time in the cycle (old), or the cycle's own "
            "(new)",
            Since("4.1.0"), "recomputed", "reused",
            "PR #24064 (ThresholdShedder.tryLowerBoundaryShedding reuses avgUsage; master "
            "2025-03, no cherry-pick label)"),
    Variant("avgShedder",
            "AvgShedder exists (else Pulsar falls back to OverloadShedder for shedding and to "
            "LeastLongTermMessageRate for placement)",
            Since("3.0.6", "3.2.4", "3.3.1", "4.0.0"), False, True,
            "PIP-364, PRs #22949 / #23053; ModularLoadManagerImpl.createLoadSheddingStrategy"),
    Variant("avgShedderScoreOrder",
            "how AvgShedder.findBundlesForUnloading sorts the brokers by score: a stream of the "
            "score map sorted with (int) (score1 - score2) (old: scores less than a point apart "
            "tie, the order follows TimSort's steps and the sort can throw, failing the "
            "shedding cycle), or by the score itself (new)",
            Since("4.0.8", "4.1.2"), "int-cast", "double",
            "PR #24954 (AvgShedder comparison error, merged 2025-11-06; listed in the release "
            "notes of 4.0.8 and 4.1.2, both 2025-11-17, and of 4.2.0; not in those of 3.0.15 "
            "(the same day) or 3.0.17)"),
    Variant("avgShedderBundleMap",
            "AvgShedder's bundle → broker map of plans and random picks: keyed by the BundleData "
            "object and never emptied, so an entry answers any later selectBroker of the bundle "
            "while the leader keeps that BundleData (old), or keyed by name and emptied per "
            "unload attempt (new)",
            Since("4.0.14", "4.2.5"), "bundle-data", "name",
            "PR #26246 (listed in the release notes of 4.0.14 and 4.2.5); AvgShedder at "
            "d76ae6831a1c; ModularLoadManagerImpl.updateBundleData at 009a9bf2cdff"),
    Variant("sheddingStrategyFailFast",
            "a loadBalancerLoadSheddingStrategy that is not a modular LoadSheddingStrategy "
            "(TransferShedder, a missing class): ModularLoadManagerImpl sheds with "
            "OverloadShedder instead (old), or fails to initialize, so that Pulsar falls back to "
            "SimpleLoadManagerImpl (new, LoadManager.create; from 4.0.12 and 4.2.3 the broker "
            "does not start instead: loadManagerFallback)",
            Since("4.0.0"), False, True,
            "PR #22827 (ModularLoadManagerImpl.createLoadSheddingStrategy: "
            "Reflections.createInstance; master 2024-06, label doc-not-needed only)"),
    Variant("loadManagerFallback",
            "what LoadManager.create does when the load manager named cannot be created or "
            "refuses its configuration (a missing loadManagerClassName class, the AvgShedder "
            "key check): run SimpleLoadManagerImpl instead (old), or fail, so that the broker "
            "does not start (new); a blank loadManagerClassName still names SimpleLoadManagerImpl",
            Since("4.0.12", "4.2.3"), "simple", "fail",
            "PR #26031 (merged 2026-06; listed in the release notes of 4.0.12 and 4.2.3, both "
            "2026-07-06; the 4.1 line had no release after it. That a blank name still means "
            "SimpleLoadManagerImpl is inferred from the PR's description)"),
    Variant("avgShedderBindKey",
            "the key ModularLoadManagerImpl.initialize compares loadBalancerLoadShedding"
            "Strategy with when placement is AvgShedder: loadBalancerLoadPlacementStrategy, or by "
            "mistake SimpleLoadManagerImpl's loadBalancerPlacementStrategy (then the load manager "
            "refuses to start and Pulsar falls back to SimpleLoadManagerImpl)",
            Releases("3.0.6", "3.0.7", "3.2.4", "3.3.1", "3.3.2"),
            "loadBalancerLoadPlacementStrategy", "loadBalancerPlacementStrategy",
            "PR #23156 (fixed in 3.0.8, 3.3.3, 4.0.0)"),
    # --- namespace policies -----------------------------------------------------------------------
    Variant("isolationBrokerHost",
            "the host isolation policies' broker regexes are matched against: "
            "new URL(\"http://\" + brokerId).getHost() (old) or the broker id up to its last "
            "':' (new, parseBrokerHost); never the host:port id",
            Since("3.2.0"), "url", "brokerId",
            "LoadManagerShared.applyNamespacePolicies(Async); PR #21894 (master only, no "
            "cherry-pick label)"),
    # --- extensible load manager ------------------------------------------------------------------
    Variant("extensible",
            "the extensible load manager (PIP-192) and TransferShedder (PIP-220) exist",
            Since("3.0.0"), False, True, "PIP-192, PIP-220"),
    Variant("selectCandidateMap",
            "the map ExtensibleLoadManagerImpl.selectAsync copies the broker registry's map into "
            "(its iteration order is the candidates' order, which the random pick among equal "
            "brokers indexes): a HashMap, the filters run one by one and a failing one restores "
            "the candidates in a fresh copy (old), or a ConcurrentHashMap the filters share, a "
            "failing one keeping the others' removals (new)",
            Since("3.0.1", "3.1.0"), "HashMap", "ConcurrentHashMap",
            "PR #20666 (listed in the 3.0.1 release notes)"),
    Variant("transferUnderloadedRule",
            "TransferShedder's underloaded test: weightedMaxEMA < avg·m or msgThroughputEMA < 1 "
            "B/s (old), or msgThroughputEMA < the max broker's msgThroughputEMA·m (new)",
            Since("3.0.5", "3.2.3", "3.3.0"), "absolute", "relative",
            "PR #22321 (TransferShedder.isUnderLoaded)"),
    Variant("transferSkipsZeroThroughput",
            "TransferShedder skips bundles without throughput (in + out = 0)",
            Since("3.3.3", "4.0.1"), False, True, "PR #23626 (TransferShedder)"),
    Variant("topKSkipsZeroThroughput",
            "TopKBundles leaves bundles without throughput (in + out = 0) out of the top bundles a "
            "broker reports, so they neither fill its top-k slots nor count as its top bundles",
            Since("3.3.3", "4.0.1"), False, True,
            "PR #23626 (TopKBundles.update; the same change as transferSkipsZeroThroughput)"),
    Variant("topKComparator",
            "NamespaceBundleStats.compareTo, which orders TopKBundles: figures within a "
            "threshold compare equal (old, not transitive), or figures rounded to a resolution "
            "are compared (new)",
            Since("3.0.14", "3.3.9", "4.0.7", "4.1.1"), "threshold", "resolution",
            "PR #24772 (NamespaceBundleStats.compareTo)"),
    # --- split algorithms -------------------------------------------------------------------------
    Variant("splitNeedsTwoBrokers",
            "ModularLoadManagerImpl.checkNamespaceBundleSplit returns when at most one broker is "
            "known (new), or splits with a single broker too (old)",
            Since("3.0.1", "3.1.0"), False, True,
            "PR #20190 (knownBrokers.size() <= 1; label release/3.0.1 only, no 2.x cherry-pick)"),
    Variant("flowOrQps",
            "the flow_or_qps_equally_divide split algorithm exists (else an unknown algorithm "
            "name falls back to range_equally_divide)",
            Since("3.0.0"), False, True,
            "PIP-169; NamespaceService.getNamespaceBundleSplitAlgorithmByName"),
    # --- Java libraries ---------------------------------------------------------------------------
    Variant("guavaMultimapBuckets",
            "buckets of the ArrayListMultimap the modular shedders return (Guava <= 31.1: "
            "capacity(12) = 17 → 32 buckets; Guava >= 32: capacity(12) = 16 → 16 buckets), "
            "which orders the unloads by broker",
            Since("2.10.5", "2.11.2", "3.0.1", "3.1.0"), 32, 16,
            "Guava Maps.capacity (Guava PR #5965); Pulsar PR #20459 (Guava 32.0.0)"),
)

VARIANTS_BY_NAME: Mapping[str, Variant] = MappingProxyType({v.name: v for v in VARIANTS})

#: setting → variant giving its default in a release
DEFAULTS: Mapping[str, str] = MappingProxyType({
    "loadBalancerMemoryResourceWeight": "memoryWeightDefault",
    "loadBalancerDirectMemoryResourceWeight": "directMemoryWeightDefault",
})

#: setting → variant without which the release has no such setting (Pulsar ignores the key: the
#: declared default applies whatever the snapshot, broker.conf or --set say)
ABSENT: Mapping[str, str] = MappingProxyType({
    "loadBalancerSheddingExcludedNamespaces": "sheddingExcludedNamespaces",
})

# --- a resolved profile --------------------------------------------------------------------------
class Profile(Struct, frozen=True):
    """The behaviour of one Pulsar release, as lbctl models it.

    ``version``: the release modelled; ``requested``: what was asked for (``None``: nothing);
    ``origin``: where the version came from (``--pulsar-version``, ``snapshot``, ``newest``);
    ``warning``: why the release modelled is not exactly the one asked for, if so.
    """

    version: Version
    requested: str | None = None
    origin: str = "newest"
    warning: str | None = None
    values: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    @property
    def line(self) -> str:
        return f"{self.version.major}.{self.version.minor}"

    @property
    def name(self) -> str:
        """How the profile is named in outputs: ``Pulsar 3.0.17 (snapshot)``."""
        return f"Pulsar {self.version} ({self.origin})"

    def setting_defaults(self) -> dict[str, Any]:
        """Defaults of this release that differ from lbctl's declared (newest) ones."""
        return {key: self.values[var] for key, var in DEFAULTS.items()}

    def absent_settings(self) -> list[str]:
        """Settings this release does not have (:data:`ABSENT`)."""
        return [key for key, var in ABSENT.items() if not self.values[var]]

    def differences(self) -> list[tuple[Variant, Any]]:
        """The variants where this release differs from the default profile (:data:`DEFAULT`,
        what lbctl models when no release is named)."""
        default = profile_for(DEFAULT)
        return [(v, self.values[v.name]) for v in VARIANTS
                if self.values[v.name] != default.values[v.name]]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"version": str(self.version), "line": self.line,
                             "origin": self.origin}
        if self.requested is not None:
            d["requested"] = self.requested
        if self.warning:
            d["warning"] = self.warning
        return d


@lru_cache(maxsize=64)
def profile_for(version: Version, requested: str | None = None, origin: str = "newest",
                warning: str | None = None) -> Profile:
    values = {v.name: v.value(version) for v in VARIANTS}
    return Profile(version, requested, origin, warning, MappingProxyType(values))


def newest() -> Profile:
    """The profile modelled when no release is named: :data:`DEFAULT` (labelled ``newest`` in
    outputs)."""
    return profile_for(DEFAULT)


def resolve(requested: str | None, *, origin: str = "--pulsar-version") -> Profile:
    """The profile of a version string; unknown lines get the nearest known one and a warning.

    ``X.Y`` without a patch number means the newest patch release of that line lbctl knows.
    ``ValueError`` when the string is not a version at all.
    """
    if requested is None:
        return newest()
    v = Version.parse(requested)
    if v.line in LINES:
        if not has_patch(requested):
            v = LINES[v.line]
        return profile_for(v, requested, origin)
    older = [line for line in LINES if line < v.line]
    near = LINES[max(older)] if older else Version(*min(LINES), 0)
    warning = (f"Pulsar {requested} is not a release line lbctl has a profile for; using the "
               f"nearest, Pulsar {near}")
    return profile_for(near, requested, origin, warning)


def from_brokers(versions: Mapping[str, str | None]) -> tuple[str | None, str | None]:
    """The version to model from the brokers' ``brokerVersionString``: the one most brokers run
    (the newest on a tie), and a note when they differ (a rolling upgrade: the leader may run
    either). ``(None, None)`` when no broker says."""
    counts: dict[Version, tuple[int, str]] = {}
    for raw in versions.values():
        if not raw:
            continue
        try:
            v = Version.parse(raw)
        except ValueError:
            continue
        n, text = counts.get(v, (0, raw))
        counts[v] = (n + 1, text)
    if not counts:
        return None, None
    best = max(counts, key=lambda v: (counts[v][0], v))
    note = None
    if len(counts) > 1:
        seen = ", ".join(f"{counts[v][1]} ×{counts[v][0]}" for v in sorted(counts))
        note = (f"brokers run different Pulsar versions ({seen}); modelling {counts[best][1]}, "
                "the most common (the leader's own version decides; use --pulsar-version)")
    return counts[best][1], note


def choose(requested: str | None, reported: Mapping[str, str | None], *,
           origin: str = "snapshot") -> tuple[Profile, list[str]]:
    """**The** rule every command follows to pick the release it models, and its notes: the
    version asked for (``--pulsar-version``), else the one most of the brokers report
    (``brokerVersionString`` of the latest snapshot: the leader's release today; the newest on a
    tie), else the default profile (:data:`DEFAULT`). ``reported`` maps each broker to its version string;
    ``origin`` names where they come from (``snapshot``, or ``cluster`` for a live read).
    ``ValueError`` when ``requested`` is not a version."""
    notes: list[str] = []
    if requested:
        profile = resolve(requested)
    else:
        text, note = from_brokers(reported)
        if note:
            notes.append(note)
        profile = resolve(text, origin=origin) if text else newest()
    if profile.warning:
        notes.append(profile.warning)
    return profile, notes


# --- the table in docs/versions.md ---------------------------------------------------------------
def _cell(value: Any) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value)


def markdown_table() -> str:
    """One row per variant, one column per release line (its newest known patch), then the
    releases that changed it and the source. ``docs/versions.md`` carries this table verbatim."""
    lines = sorted(LINES)
    head = "| behaviour | " + " | ".join(f"{a}.{b}" for a, b in lines) + " | changed in | source |"
    sep = "|---|" + "---|" * len(lines) + "---|---|"
    rows = [head, sep]
    for var in VARIANTS:
        cells = [_cell(var.value(LINES[line])) for line in lines]
        rows.append(f"| `{var.name}`: {var.what} | " + " | ".join(cells)
                    + f" | {var.since} | {var.source} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # python -m lbctl.versions: the table docs/versions.md carries
    print(markdown_table(), end="")
