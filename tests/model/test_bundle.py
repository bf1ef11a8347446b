"""Bundle ranges, names and topic hashing.

Ported from Pulsar's ``NamespaceBundlesTest`` and ``NamespaceBundleTest``
(pulsar-broker/src/test/java/org/apache/pulsar/common/naming/), plus the boundary rules of
``PoliciesUtil.getBundles`` / ``NamespaceBundleFactory.splitBundles`` and the topic-hash vector
that ``PulsarStandaloneTest#testMetadataInitialization`` verifies.
"""

from __future__ import annotations

import zlib

import pytest

from lbctl.model.bundle import (
    FULL_LOWER,
    FULL_RANGE,
    FULL_UPPER,
    BundleName,
    BundleNameError,
    BundleRange,
    default_boundaries,
    format_position,
    locate,
    namespace_of,
    parse_position,
    ranges_from_boundaries,
    topic_hash,
    topic_namespace,
    validate_boundaries,
)


def _span(ranges: tuple[BundleRange, ...]) -> tuple[int, int]:
    """Guava ``Range.span`` over consecutive ranges: (lowest lower, highest upper)."""
    return min(r.lower for r in ranges), max(r.upper for r in ranges)


def _assert_contiguous(parent: BundleRange, children: tuple[BundleRange, ...]) -> None:
    assert _span(children) == (parent.lower, parent.upper)
    for a, b in zip(children, children[1:], strict=False):
        assert a.upper == b.lower


def _assert_bundle_divide_in_two(parent: BundleRange, children: tuple[BundleRange, ...]) -> None:
    """``NamespaceBundlesTest.assertBundleDivideInTwo``: halves at ``(upper - lower) / 2 + lower``."""
    assert len(children) == 2
    middle = (parent.upper - parent.lower) // 2 + parent.lower
    assert str(children[0]) == f"0x{parent.lower:08x}_0x{middle:08x}"
    assert str(children[1]) == f"0x{middle:08x}_0x{parent.upper:08x}"


# --- NamespaceBundlesTest -----------------------------------------------------------------------


def test_constructor() -> None:
    """Partitions {0, 0x10000000, 0x40000000, 0xffffffff} give three bundles, the last closed."""
    partitions = (0, 0x10000000, 0x40000000, 0xFFFFFFFF)
    ranges = ranges_from_boundaries(partitions)
    assert len(ranges) == 3
    assert ranges[0] == BundleRange(0, 0x10000000)
    assert ranges[1] == BundleRange(0x10000000, 0x40000000)
    assert ranges[2] == BundleRange(0x40000000, 0xFFFFFFFF)
    assert [r.closed for r in ranges] == [False, False, True]
    assert str(BundleName("pulsar/use/ns2", ranges[2])) == "pulsar/use/ns2/0x40000000_0xffffffff"


def test_find_bundle() -> None:
    partitions = (0, 0x40000000, 0xA0000000, 0xB0000000, 0xC0000000, 0xFFFFFFFF)
    topic = "persistent://pulsar/global/ns1/topic-1"
    h = topic_hash(topic)
    bundle = locate(partitions, h)
    assert bundle.contains(h)
    assert bundle in ranges_from_boundaries(partitions)

    # a topic of another namespace does not belong to pulsar/global/ns1 (Java: IllegalArgument)
    assert topic_namespace("persistent://pulsar/use/ns2/topic-2") != "pulsar/global/ns1"

    # boundaries that start after the hash: out of range (Java: IndexOutOfBounds)
    other = "persistent://pulsar/use/ns2/topic-2"
    h2 = topic_hash(other)
    tail = sorted({p for p in partitions if p >= h2} | {h2})
    new_par = tail[1:]  # drop the range holding the hash, keep the ranges after it
    assert new_par == [0xA0000000, 0xB0000000, 0xC0000000, 0xFFFFFFFF]  # hash 0x96f239f6
    with pytest.raises(BundleNameError):
        locate(new_par, h2)


def test_split_bundles() -> None:
    """(1) full range in 4, (2) its first child in 4, (3) its second child in 3."""
    full = FULL_RANGE
    split = full.split_equally(4)
    _assert_contiguous(full, split)
    assert len(split) == 1 + 4 - 1

    child = split[0]
    split_child = child.split_equally(4)
    _assert_contiguous(child, split_child)
    assert len(split) + len(split_child) - 1 == 4 + 4 - 1

    child2 = split[1]
    split_child2 = child2.split_equally(3)
    _assert_contiguous(child2, split_child2)
    assert len(split_child2) == 3


def test_split_bundle_in_two() -> None:
    full = FULL_RANGE
    # (1) [0x00000000,0xffffffff] => [0x00000000_0x7fffffff, 0x7fffffff_0xffffffff]
    halves = full.split_equally(2)
    assert [str(r) for r in halves] == ["0x00000000_0x7fffffff", "0x7fffffff_0xffffffff"]
    _assert_bundle_divide_in_two(full, halves)
    # (2) each half in two: 0x3fffffff and 0xbfffffff
    quarters = [q for h in halves for q in h.split_equally(2)]
    for h in halves:
        _assert_bundle_divide_in_two(h, h.split_equally(2))
    assert [str(q) for q in quarters] == [
        "0x00000000_0x3fffffff",
        "0x3fffffff_0x7fffffff",
        "0x7fffffff_0xbfffffff",
        "0xbfffffff_0xffffffff",
    ]
    # (3) [0x00000000,0x3fffffff] => 0x1fffffff; [0x3fffffff,0x7fffffff] => 0x5fffffff
    assert str(quarters[0].split_equally(2)[0]) == "0x00000000_0x1fffffff"
    assert str(quarters[1].split_equally(2)[1]) == "0x5fffffff_0x7fffffff"
    # (4) [0x7fffffff,0xbfffffff] => 0x9fffffff; [0xbfffffff,0xffffffff] => 0xdfffffff
    assert str(quarters[2].split_equally(2)[0]) == "0x7fffffff_0x9fffffff"
    assert str(quarters[3].split_equally(2)[1]) == "0xdfffffff_0xffffffff"
    assert quarters[3].split_equally(2)[1].closed
    for q in quarters:
        _assert_bundle_divide_in_two(q, q.split_equally(2))


def test_split_bundle_by_fix_boundary() -> None:
    bundle = ranges_from_boundaries(default_boundaries(4))[0]
    # a boundary at either end of the bundle is rejected
    with pytest.raises(BundleNameError):
        bundle.split_at([bundle.lower])
    with pytest.raises(BundleNameError):
        bundle.split_at([bundle.upper])
    fix_boundary = bundle.lower + 10
    parts = bundle.split_at([fix_boundary])
    assert parts[0].lower == bundle.lower
    # Pulsar asserts lower + fixBoundary, which equals fixBoundary because lower is 0
    assert parts[1].lower == bundle.lower + fix_boundary
    assert parts[1].upper == bundle.upper


# --- NamespaceBundleTest --------------------------------------------------------------------------


def test_bundle_constructor() -> None:
    """``NamespaceBundleTest.testConstructor``: empty or inverted ranges are rejected."""
    for lower, upper in ((0, 0), (1, 1), (5, 4), (0, FULL_UPPER + 1), (-1, 10)):
        with pytest.raises(BundleNameError):
            BundleRange(lower, upper)
    bundle = BundleRange(0, 1)
    assert (bundle.lower, bundle.upper) == (0, 1)
    assert not bundle.closed  # [0, 1) is half-open
    assert BundleRange(0, FULL_UPPER).closed  # only the range ending at 0xffffffff is closed
    assert str(BundleName("pulsar/use/ns", bundle)) == "pulsar/use/ns/0x00000000_0x00000001"


def test_compare_to() -> None:
    """Bundles of one namespace order by their range (Pulsar rejects overlapping ones)."""
    bundle0 = BundleRange(0, 0x10000000)
    bundle1 = BundleRange(0, 0x20000000)
    bundle2 = BundleRange(0x20000000, 0x40000000)
    assert bundle0 < bundle2
    assert bundle2 > bundle0
    assert bundle1 < bundle2
    assert BundleRange(0, 0x40000000) == BundleRange(0, 0x40000000)


def test_equals() -> None:
    ns1 = BundleName("pulsar/use/ns1", BundleRange(0, 0x40000000))
    assert ns1 != BundleName("pulsar/use/ns1", BundleRange(0x20000000, 0x40000000))
    assert ns1 == BundleName("pulsar/use/ns1", BundleRange(0, 0x40000000))
    assert ns1 != BundleName("pulsar/use/ns2", BundleRange(0, 0x40000000))


def test_includes() -> None:
    topic = "persistent://pulsar/use/ns1/topic-1"
    h = topic_hash(topic)
    upper = max(h + 1, FULL_UPPER)  # as in the Java test: always the full upper bound
    bundle = BundleRange(h // 2, upper)
    assert bundle.closed
    assert bundle.contains(h)
    assert not BundleRange(h + 1, FULL_UPPER).contains(h)
    # the upper bound of a half-open range is excluded, of the closed last range included
    assert not BundleRange(0, 0x40000000).contains(0x40000000)
    assert BundleRange(0xC0000000, FULL_UPPER).contains(FULL_UPPER)
    assert BundleRange(0xC0000000, FULL_UPPER).contains(0xC0000000)


def test_to_string() -> None:
    assert str(BundleName("pulsar/use/ns1", BundleRange(0, 0x10000000))) == (
        "pulsar/use/ns1/0x00000000_0x10000000"
    )
    assert str(BundleName("pulsar/use/ns1", BundleRange(0x10000000, FULL_UPPER))) == (
        "pulsar/use/ns1/0x10000000_0xffffffff"
    )


# --- parsing and formatting ----------------------------------------------------------------------


def test_parse_and_format_round_trip() -> None:
    for text in ("0x00000000_0xffffffff", "0x3fffffff_0x7ffffffe", "0xc0000000_0xffffffff"):
        assert str(BundleRange.parse(text)) == text
    name = BundleName.parse("public/default/0x40000000_0x80000000")
    assert name.namespace == "public/default"
    assert name.range == BundleRange(0x40000000, 0x80000000)
    assert str(name) == "public/default/0x40000000_0x80000000"
    # v1 names with a cluster in the middle are still bundle names
    assert BundleName.parse("pulsar/use/ns1/0x00000000_0xffffffff").namespace == "pulsar/use/ns1"
    assert namespace_of("public/default/0x40000000_0x80000000") == "public/default"
    assert format_position(0x7FFFFFFF) == "0x7fffffff"


@pytest.mark.parametrize(
    "text",
    [
        "0x0_0xffffffff",  # not 8 digits
        "0X00000000_0XFFFFFFFF",  # upper-case prefix
        "0x00000000_0xFFFFFFFF",  # upper-case digits
        "0x00000000-0xffffffff",
        "0x80000000_0x40000000",  # inverted
        "0x40000000_0x40000000",  # empty
    ],
)
def test_parse_rejects_bad_ranges(text: str) -> None:
    with pytest.raises(BundleNameError):
        BundleRange.parse(text)


@pytest.mark.parametrize(
    "text", ["0x00000000_0xffffffff", "default/0x00000000_0xffffffff", "a//0x00000000_0xffffffff",
             "public/default/0x00000000", "public/default/"],
)
def test_parse_rejects_bad_names(text: str) -> None:
    with pytest.raises(BundleNameError):
        BundleName.parse(text)


def test_parse_position_like_long_decode() -> None:
    assert parse_position("0x40000000") == 0x40000000
    assert parse_position("0XFFFFFFFF") == 0xFFFFFFFF
    assert parse_position("#10") == 16
    assert parse_position("010") == 8  # a leading zero means octal
    assert parse_position("1073741824") == 0x40000000
    assert parse_position("0") == 0
    for bad in ("0x100000000", "-1", "abc", ""):
        with pytest.raises(BundleNameError):
            parse_position(bad)


# --- boundaries, default bundles and lookup -----------------------------------------------------


def test_default_boundaries_for_n_bundles() -> None:
    """``PoliciesUtil.getBundles(n)``: ``seg = 2^32 / n``, last boundary ``0xffffffff``."""
    assert default_boundaries(1) == (FULL_LOWER, FULL_UPPER)
    assert default_boundaries(4) == (0, 0x40000000, 0x80000000, 0xC0000000, 0xFFFFFFFF)
    assert default_boundaries(2) == (0, 0x80000000, 0xFFFFFFFF)
    assert default_boundaries(3) == (0, 0x55555555, 0xAAAAAAAA, 0xFFFFFFFF)
    assert len(default_boundaries(16)) == 17
    assert default_boundaries(16)[1] == 0x10000000
    assert validate_boundaries(default_boundaries(128)) is None
    with pytest.raises(BundleNameError):
        default_boundaries(0)


def test_creation_and_split_boundaries_differ() -> None:
    """Four bundles at creation are 0x40000000 apart; splitting the full range in 4 is not."""
    creation = ranges_from_boundaries(default_boundaries(4))
    split = FULL_RANGE.split_equally(4)
    assert [r.upper for r in split[:-1]] == [0x3FFFFFFF, 0x7FFFFFFE, 0xBFFFFFFD]
    assert split[-1] == BundleRange(0xBFFFFFFD, 0xFFFFFFFF)
    assert [r.upper for r in creation[:-1]] == [0x40000000, 0x80000000, 0xC0000000]
    assert FULL_RANGE.split_equally(2)[0].upper == 0x7FFFFFFF  # not 0x80000000


def test_split_needs_room() -> None:
    assert not BundleRange(5, 6).can_split()
    assert BundleRange(5, 7).can_split()
    assert BundleRange(5, 7).split_equally(2) == (BundleRange(5, 6), BundleRange(6, 7))
    with pytest.raises(BundleNameError):
        BundleRange(5, 6).split_equally(2)
    with pytest.raises(BundleNameError):
        FULL_RANGE.split_equally(1)


def test_split_at_several_boundaries() -> None:
    parts = FULL_RANGE.split_at([0xC0000000, 0x40000000])  # any order; sorted
    assert [str(p) for p in parts] == [
        "0x00000000_0x40000000",
        "0x40000000_0xc0000000",
        "0xc0000000_0xffffffff",
    ]


def test_validate_boundaries() -> None:
    assert validate_boundaries([0, 0xFFFFFFFF]) is None
    assert validate_boundaries([0]) is not None
    assert validate_boundaries([1, 0xFFFFFFFF]) is not None
    assert validate_boundaries([0, 0x80000000]) is not None
    assert "ascending" in (validate_boundaries([0, 0x80000000, 0x80000000, 0xFFFFFFFF]) or "")
    assert "ascending" in (validate_boundaries([0, 0x80000000, 0x40000000, 0xFFFFFFFF]) or "")


def test_locate_edges() -> None:
    bounds = default_boundaries(4)
    assert locate(bounds, 0) == BundleRange(0, 0x40000000)
    assert locate(bounds, 0x3FFFFFFF) == BundleRange(0, 0x40000000)
    assert locate(bounds, 0x40000000) == BundleRange(0x40000000, 0x80000000)  # exact boundary
    # 0xffffffff belongs to the closed last bundle (Java would index past the bundle list)
    assert locate(bounds, 0xFFFFFFFF) == BundleRange(0xC0000000, 0xFFFFFFFF)


# --- topic -> bundle -----------------------------------------------------------------------------


def test_topic_hash_is_crc32_of_the_full_name() -> None:
    """``PulsarStandaloneTest#testMetadataInitialization``: the topic lands in the last bundle."""
    topic = "persistent://public/default/test-get-topic-bundle-range"
    assert topic_hash(topic) == 0xCA437FB1
    assert topic_hash(topic) == zlib.crc32(topic.encode())
    bundle = locate(default_boundaries(4), topic_hash(topic))
    assert str(BundleName("public/default", bundle)) == "public/default/0xc0000000_0xffffffff"
    # hashing the short name would give another bundle: the full name is what counts
    assert topic_hash("test-get-topic-bundle-range") == 0x786FD9B7
    assert locate(default_boundaries(4), 0x786FD9B7) == BundleRange(0x40000000, 0x80000000)


def test_topic_hash_is_unsigned_and_utf8() -> None:
    assert topic_hash("") == 0
    assert 0 <= topic_hash("persistent://t/ns/é") <= 0xFFFFFFFF
    assert topic_hash("persistent://t/ns/é") == zlib.crc32("persistent://t/ns/é".encode())


def test_topic_namespace() -> None:
    assert topic_namespace("persistent://public/default/orders") == "public/default"
    assert topic_namespace("non-persistent://acme/iot/sensors-partition-3") == "acme/iot"
    assert topic_namespace("public/default/orders") == "public/default"
