"""What a split algorithm receives and returns, and how a name becomes an algorithm.

Mirrors ``org.apache.pulsar.common.naming.NamespaceBundleSplitAlgorithm`` and its inputs
``BundleSplitOption`` / ``FlowOrQpsEquallyDivideBundleSplitOption``: an algorithm gets the bundle,
the topics the owner broker has loaded in it (full names, hashed with CRC-32 like
``NamespaceBundleFactory.getLongHashCode``), the positions an operator asked for, and — only for
``flow_or_qps_equally_divide`` — per-topic stats and three settings. It returns the split
boundaries, or none (Pulsar's ``null`` or empty list, after which the broker logs "No valid boundary
found" and leaves the bundle alone).

Algorithms are pure; they say *why* as a :class:`BoundaryWhy` (a code and the figures behind it,
worded by :mod:`lbctl.explain.words.split_algorithms`) so the preview can explain itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Literal, Protocol

from msgspec import Struct, field

from lbctl.config import Settings
from lbctl.errors import LbctlError
from lbctl.model.bundle import BundleRange, format_position, topic_hash
from lbctl.model.cluster import TopicStats
from lbctl.model.decision import Why

RANGE_EQUALLY_DIVIDE = "range_equally_divide"
TOPIC_COUNT_EQUALLY_DIVIDE = "topic_count_equally_divide"
SPECIFIED_POSITIONS_DIVIDE = "specified_positions_divide"
FLOW_OR_QPS_EQUALLY_DIVIDE = "flow_or_qps_equally_divide"
MB = 1024 * 1024  # FlowOrQpsEquallyDivideBundleSplitAlgorithm.MBytes, LoadManagerShared.MIBI

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class SplitError(LbctlError):
    """A split Pulsar would refuse (IllegalArgumentException, 404, 412…), in one line."""


class FlowOrQpsLimits(Struct, frozen=True):
    """The extra inputs of ``FlowOrQpsEquallyDivideBundleSplitOption``."""

    max_msg_rate: int = 30000  # loadBalancerNamespaceBundleMaxMsgRate, msg/s
    max_bandwidth_mbytes: int = 100  # loadBalancerNamespaceBundleMaxBandwidthMbytes, MB/s
    difference_threshold_percentage: int = 10  # flowOrQpsDifferenceThresholdPercentage

    @classmethod
    def from_settings(cls, settings: Settings) -> FlowOrQpsLimits:
        return cls(
            int(settings["loadBalancerNamespaceBundleMaxMsgRate"]),
            int(settings["loadBalancerNamespaceBundleMaxBandwidthMbytes"]),
            int(settings["flowOrQpsDifferenceThresholdPercentage"]),
        )


class SplitOption(Struct, frozen=True):
    """``BundleSplitOption``: the bundle, its owned topics and the positions asked for.

    ``topic_stats`` and ``limits`` are set only when Pulsar would build a
    ``FlowOrQpsEquallyDivideBundleSplitOption`` — that is, when the broker's
    ``defaultNamespaceBundleSplitAlgorithm`` is ``flow_or_qps_equally_divide``
    (``NamespaceService.getBundleSplitOption``). ``hash`` stands for
    ``NamespaceBundleFactory.getLongHashCode`` (Pulsar's tests mock it the same way).
    """

    bundle: BundleRange
    topics: tuple[str, ...] = ()
    positions: tuple[int, ...] | None = None
    topic_stats: Mapping[str, TopicStats] | None = None
    limits: FlowOrQpsLimits | None = None
    hash: Callable[[str], int] = topic_hash


#: How a split algorithm came to its boundaries (or to none).
Boundary = Literal[
    "middle",  # range_equally_divide: lower, upper, middle
    "few-topics",  # count (topics): at least 2 are needed
    "topic-middle",  # count, start, end, middle, below (topics below it)
    "none-inside",  # specified positions: range, dropped
    "inside",  # positions, range, dropped
    "few-with-traffic",  # flow or QPS: with_traffic, count
    "below-limits",  # rate, throughput, percentage, max_rate, max_tp, margin
    "no-cut",  # rate, throughput, with_traffic, max_rate, max_mb
    "cuts",  # the same, and positions (the cuts)
]


class BoundaryWhy(Why, frozen=True):
    """A reason of :data:`Boundary`, with its figures (bytes/s for throughputs)."""

    code: Boundary
    count: int = 0
    lower: int = 0
    upper: int = 0
    middle: int = 0
    start: int = 0
    end: int = 0
    below: int = 0
    range: BundleRange | None = None
    positions: tuple[int, ...] = ()
    dropped: tuple[int, ...] = ()
    with_traffic: int = 0
    rate: float = 0.0
    throughput: float = 0.0
    percentage: int = 0
    max_rate: int = 0
    max_tp: int = 0
    max_mb: int = 0
    margin: float = 0.0


class SplitBoundaries(Struct, frozen=True):
    """An algorithm's answer: ascending boundaries, or ``None`` for "no split", and why."""

    algorithm: str
    boundaries: tuple[int, ...] | None
    why: BoundaryWhy
    numbers: Mapping[str, float] = field(default_factory=lambda: _EMPTY)

    @property
    def splits(self) -> bool:
        return bool(self.boundaries)

    def hex(self) -> list[str]:
        return [format_position(b) for b in self.boundaries or ()]


class SplitAlgorithm(Protocol):
    """A ``NamespaceBundleSplitAlgorithm``: ``getSplitBoundary(option)``."""

    name: str

    def boundaries(self, option: SplitOption) -> SplitBoundaries: ...


def apply_boundaries(bundle: BundleRange, boundaries: Sequence[int]) -> tuple[BundleRange, ...]:
    """``NamespaceBundleFactory.splitBundles(bundle, n + 1, boundaries)``: the children.

    The factory refuses a range with ``upper - lower <= 1`` and any boundary not strictly inside
    it; a boundary given twice would leave an empty bundle, which we refuse too.
    """
    if not bundle.can_split():
        raise SplitError(f"bundle {bundle} can't be split further (upper - lower <= 1)")
    seen: set[int] = set()
    for b in boundaries:
        if not bundle.lower < b < bundle.upper:
            raise SplitError(f"split boundary {format_position(b)} must be strictly inside {bundle}")
        if b in seen:
            raise SplitError(f"split boundary {format_position(b)} is given twice: "
                             "the split would leave an empty bundle")
        seen.add(b)
    return bundle.split_at(sorted(boundaries))


def split_namespace(boundaries: Sequence[int], bundle: BundleRange,
                    split_points: Sequence[int]) -> tuple[int, ...]:
    """The namespace's boundary list after splitting ``bundle`` (``NamespaceBundles`` rebuilt)."""
    bounds = list(boundaries)
    for i in range(len(bounds) - 1):
        if bounds[i] == bundle.lower and bounds[i + 1] == bundle.upper:
            children = apply_boundaries(bundle, split_points)
            return (*bounds[: i + 1], *(c.upper for c in children[:-1]), *bounds[i + 1:])
    raise SplitError(f"bundle {bundle} is not one of the namespace's bundles")


def option_for(
    bundle: BundleRange,
    topics: Sequence[str],
    topic_stats: Mapping[str, TopicStats],
    settings: Settings,
    positions: Sequence[int] | None = None,
) -> SplitOption:
    """``NamespaceService.getBundleSplitOption``: a flow-or-QPS option (per-topic stats and limits)
    when the broker's default algorithm is ``flow_or_qps_equally_divide``, else a plain one."""
    flow = settings["defaultNamespaceBundleSplitAlgorithm"] == FLOW_OR_QPS_EQUALLY_DIVIDE
    return SplitOption(
        bundle=bundle,
        topics=tuple(topics),
        positions=None if positions is None else tuple(positions),
        topic_stats={t: topic_stats[t] for t in topics if t in topic_stats} if flow else None,
        limits=FlowOrQpsLimits.from_settings(settings) if flow else None,
    )
