"""Bundle ranges, bundle names and topic hashing.

Mirrors ``org.apache.pulsar.common.naming.NamespaceBundle``, ``NamespaceBundles`` and
``NamespaceBundleFactory``: a namespace's hash space ``[0x00000000, 0xffffffff]`` is cut into
half-open ranges ``[lower, upper)``; the range whose upper bound is ``0xffffffff`` is closed.
All arithmetic is on unsigned 32-bit values held in Python ints (Java uses signed longs, which
cannot overflow here), and divisions are Java integer divisions of non-negative operands.
"""

from __future__ import annotations

import bisect
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

FULL_LOWER = 0x00000000
FULL_UPPER = 0xFFFFFFFF
_HASH_SPACE = 1 << 32

_RANGE_RE = re.compile(r"^0x([0-9a-f]{8})_0x([0-9a-f]{8})$")


class BundleNameError(ValueError):
    """A string that is not a valid bundle range or bundle name."""


def format_position(value: int) -> str:
    """A hash position as Pulsar prints it: ``0x%08x``."""
    return f"0x{value:08x}"


def parse_position(text: str) -> int:
    """Parse a boundary like Java's ``Long.decode``: ``0x``/``#`` hex, leading-zero octal or decimal."""
    s = text.strip()
    try:
        if s.lower().startswith(("0x", "-0x", "+0x")):
            value = int(s, 16)
        elif s.startswith("#"):
            value = int(s[1:], 16)
        elif len(s) > 1 and s.startswith("0"):
            value = int(s, 8)
        else:
            value = int(s, 10)
    except ValueError:
        raise BundleNameError(f"not a hash position: {text!r}") from None
    if not FULL_LOWER <= value <= FULL_UPPER:
        raise BundleNameError(f"hash position {text!r} is outside 0x00000000..0xffffffff")
    return value


@dataclass(frozen=True, slots=True, order=True)
class BundleRange:
    """A hash range ``[lower, upper)``; closed at the top when ``upper == 0xffffffff``."""

    lower: int
    upper: int

    def __post_init__(self) -> None:
        if not FULL_LOWER <= self.lower < self.upper <= FULL_UPPER:
            raise BundleNameError(
                f"invalid bundle range {format_position(self.lower)}_{format_position(self.upper)}"
            )

    @classmethod
    def parse(cls, text: str) -> BundleRange:
        """Parse ``0xLLLLLLLL_0xUUUUUUUU`` (8 lower-case hex digits each side, as Pulsar prints)."""
        m = _RANGE_RE.match(text)
        if not m:
            raise BundleNameError(
                f"bad bundle range {text!r}: expected 0xLLLLLLLL_0xUUUUUUUU (8 lower-case hex digits)"
            )
        return cls(int(m.group(1), 16), int(m.group(2), 16))

    def __str__(self) -> str:
        return f"{format_position(self.lower)}_{format_position(self.upper)}"

    @property
    def closed(self) -> bool:
        """True for the last range of a namespace, which includes ``0xffffffff`` itself."""
        return self.upper == FULL_UPPER

    def contains(self, hash_value: int) -> bool:
        if self.closed:
            return self.lower <= hash_value <= self.upper
        return self.lower <= hash_value < self.upper

    def can_split(self) -> bool:
        """``NamespaceBundleFactory`` refuses to split a range with ``upper - lower <= 1``."""
        return self.upper - self.lower > 1

    def split_equally(self, parts: int = 2) -> tuple[BundleRange, ...]:
        """Split into ``parts`` ranges as ``NamespaceBundleFactory.splitBundles(bundle, n)`` does.

        ``seg = (upper - lower) // n``; boundaries ``lower + k*seg``; the last part keeps the old
        upper. The full range in two gives ``0x7fffffff`` (not the creation-time ``0x80000000``).
        """
        if parts < 2:
            raise BundleNameError(f"cannot split into {parts} bundles")
        if not self.can_split():
            raise BundleNameError(f"bundle range {self} is too small to split")
        seg = (self.upper - self.lower) // parts
        return self.split_at([self.lower + k * seg for k in range(1, parts)])

    def split_at(self, boundaries: Sequence[int]) -> tuple[BundleRange, ...]:
        """Split at explicit boundaries, each strictly inside the range (ascending order)."""
        points = sorted(boundaries)
        for b in points:
            if not self.lower < b < self.upper:
                raise BundleNameError(
                    f"split boundary {format_position(b)} is not strictly inside {self}"
                )
        edges = [self.lower, *points, self.upper]
        return tuple(BundleRange(a, b) for a, b in zip(edges, edges[1:], strict=False))


FULL_RANGE = BundleRange(FULL_LOWER, FULL_UPPER)


@dataclass(frozen=True, slots=True)
class BundleName:
    """A full bundle name ``tenant/namespace/0x…_0x…``."""

    namespace: str
    range: BundleRange

    @classmethod
    def parse(cls, text: str) -> BundleName:
        namespace, sep, rng = text.rpartition("/")
        if not sep or not namespace:
            raise BundleNameError(
                f"bad bundle name {text!r}: expected tenant/namespace/0xLLLLLLLL_0xUUUUUUUU"
            )
        parts = namespace.split("/")
        if len(parts) not in (2, 3) or not all(parts):
            raise BundleNameError(
                f"bad bundle name {text!r}: namespace must be tenant/namespace"
            )
        try:
            return cls(namespace, BundleRange.parse(rng))
        except BundleNameError as e:
            raise BundleNameError(f"bad bundle name {text!r}: {e}") from None

    def __str__(self) -> str:
        return f"{self.namespace}/{self.range}"


def bundle_name(namespace: str, lower: int, upper: int) -> str:
    """The full name of the bundle ``[lower, upper)`` of ``namespace``, whatever its bounds (a
    split boundary an algorithm answers is named before ``NamespaceBundleFactory`` checks it)."""
    return f"{namespace}/{format_position(lower)}_{format_position(upper)}"


def namespace_of(bundle: str) -> str:
    """The namespace part of a full bundle name (everything before the last ``/``)."""
    return bundle.rpartition("/")[0]


def topic_hash(topic: str) -> int:
    """CRC-32 of the UTF-8 bytes of the *full* topic name, unsigned.

    Pulsar hashes with Guava ``Hashing.crc32()`` (``ConsistentHashingTopicBundleAssigner``), which is
    the IEEE CRC-32 that ``zlib.crc32`` computes.
    """
    return zlib.crc32(topic.encode("utf-8")) & 0xFFFFFFFF


def whole_topic_shares(topics: int, n: int, share: float = 1.0) -> tuple[float, ...]:
    """The parts of ``share`` of a bundle the ``n`` children of its split carry when nothing says
    where its traffic falls (lbctl's figure): each child a whole number of the ``topics``, as even
    as they divide, the first ones one more (a topic never divides: a one-topic bundle's children
    are all of it and nothing), each topic an even part; a bundle without topics divides evenly."""
    if topics <= 0:
        return tuple(share / n for _ in range(n))
    return tuple(share * (topics // n + (1 if j < topics % n else 0)) / topics
                 for j in range(n))


def topic_namespace(topic: str) -> str:
    """``persistent://tenant/ns/local`` → ``tenant/ns``."""
    _, sep, rest = topic.partition("://")
    path = rest if sep else topic
    return path.rsplit("/", 1)[0]


def default_boundaries(num_bundles: int) -> tuple[int, ...]:
    """Boundaries of a namespace created with ``num_bundles`` bundles (``NamespaceBundleFactory``).

    ``seg = 2**32 // n``; boundaries ``0, seg, …, (n-1)*seg`` and the last one ``0xffffffff``.
    """
    if num_bundles < 1:
        raise BundleNameError(f"number of bundles must be >= 1, got {num_bundles}")
    seg = _HASH_SPACE // num_bundles
    return (*(k * seg for k in range(num_bundles)), FULL_UPPER)


def ranges_from_boundaries(boundaries: Sequence[int]) -> tuple[BundleRange, ...]:
    """Consecutive ranges of a namespace's boundary list (strictly ascending, 0 … 0xffffffff)."""
    return tuple(BundleRange(a, b) for a, b in zip(boundaries, boundaries[1:], strict=False))


def validate_boundaries(boundaries: Sequence[int]) -> str | None:
    """Why a boundary list is not a valid namespace partition, or ``None`` when it is."""
    if len(boundaries) < 2:
        return "at least two boundaries (0x00000000 and 0xffffffff)"
    if boundaries[0] != FULL_LOWER or boundaries[-1] != FULL_UPPER:
        return "boundaries starting at 0x00000000 and ending at 0xffffffff"
    for a, b in zip(boundaries, boundaries[1:], strict=False):
        if b <= a:
            return f"strictly ascending boundaries, got {format_position(b)} after {format_position(a)}"
    return None


def locate(boundaries: Sequence[int], hash_value: int) -> BundleRange:
    """The range of ``boundaries`` that holds ``hash_value`` (``NamespaceBundles.findBundle``).

    Java binary-searches the boundaries and takes the range starting at the insertion point - 1.
    A hash equal to ``0xffffffff`` belongs to the last (closed) range; Java would index past the
    list there, which we do not reproduce.
    """
    if not boundaries[0] <= hash_value <= boundaries[-1]:
        raise BundleNameError(f"hash {format_position(hash_value)} outside the namespace range")
    idx = bisect.bisect_right(boundaries, hash_value) - 1
    idx = min(idx, len(boundaries) - 2)
    return BundleRange(boundaries[idx], boundaries[idx + 1])


# --- system namespaces --------------------------------------------------------------------------
#: ``NamespaceName.SYSTEM_NAMESPACE``: never shed (modular, Pulsar 2.11+; extensible), its bundles
#: spread evenly (modular ``selectBroker``) and never in TopKBundles (extensible)
SYSTEM_NAMESPACE = "pulsar/system"

# NamespaceService's heartbeat (v1 ``pulsar/<cluster>/<host:port>``, v2 ``pulsar/<host:port>``)
# and SLA-monitor (``<tenant>/<cluster>/<host:port>``) patterns.
# Java's ``Matcher.matches()`` is a full match, ``[^:]`` includes ``/`` and ``\d`` is ASCII only.
_SLA_OR_HEARTBEAT = re.compile(
    r"pulsar/[^/]+/[^:]+:[0-9]+|pulsar/[^:]+:[0-9]+|sla-monitor/[^/]+/[^:]+:[0-9]+"
)


SYSTEM_PREFIXES = ("pulsar/", "sla-monitor/")


def is_sla_or_heartbeat_namespace(namespace: str) -> bool:
    """``NamespaceService.isSLAOrHeartbeatNamespace``: the heartbeat and SLA-monitor namespaces,
    which belong to one broker and can never move (Pulsar 2.10 excluded only these from shedding)."""
    return _SLA_OR_HEARTBEAT.fullmatch(namespace) is not None


def is_system_service_namespace(namespace: str) -> bool:
    """``NamespaceService.isSystemServiceNamespace``: ``pulsar/system`` (PR #15252, Pulsar 2.11+),
    the heartbeat and the SLA-monitor namespaces. ``LoadData.getBundleDataForLoadShedding`` leaves
    their bundles out, so no modular shedder ever unloads them; TopKBundles does the same."""
    return namespace == SYSTEM_NAMESPACE or is_sla_or_heartbeat_namespace(namespace)


def is_shedding_excluded(namespace: str, pulsar_system: bool = True) -> bool:
    """Whether modular shedding skips a namespace: :func:`is_system_service_namespace`, or only
    :func:`is_sla_or_heartbeat_namespace` when ``pulsar_system`` is false (Pulsar 2.10)."""
    if pulsar_system:
        return is_system_service_namespace(namespace)
    return is_sla_or_heartbeat_namespace(namespace)


def count_system_bundles(bundles: Iterable[str], pulsar_system: bool = True) -> int:
    # a list of the few names with a system prefix first (a C-speed filter), then the exact test
    prefixed = [b for b in bundles if b.startswith(SYSTEM_PREFIXES)]
    return sum(1 for b in prefixed if is_shedding_excluded(namespace_of(b), pulsar_system))
