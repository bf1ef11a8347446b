"""Applying boundaries as ``NamespaceBundleFactory.splitBundles`` does, ported from
``NamespaceBundlesTest`` (split in two, by fixed boundary) at the level of a namespace's boundary
list, and the factory's refusals."""

from __future__ import annotations

import pytest

from lbctl.model.bundle import FULL_RANGE, BundleRange, default_boundaries, ranges_from_boundaries
from lbctl.strategies.split.base import SplitError, SplitOption, apply_boundaries, split_namespace
from lbctl.strategies.split.range_equally_divide import RangeEquallyDivide


def _halve(bounds: tuple[int, ...], rng: BundleRange) -> tuple[int, ...]:
    b = RangeEquallyDivide().boundaries(SplitOption(rng)).boundaries
    return split_namespace(bounds, rng, b)


def test_split_bundle_in_two_three_times() -> None:
    """``testSplitBundleInTwo``: the full range halves at 0x7fffffff, then each half again."""
    bounds = (0x00000000, 0xFFFFFFFF)
    bounds = _halve(bounds, FULL_RANGE)
    assert bounds == (0x00000000, 0x7FFFFFFF, 0xFFFFFFFF)
    bounds = _halve(bounds, BundleRange(0x00000000, 0x7FFFFFFF))
    bounds = _halve(bounds, BundleRange(0x7FFFFFFF, 0xFFFFFFFF))
    assert [str(r) for r in ranges_from_boundaries(bounds)] == [
        "0x00000000_0x3fffffff", "0x3fffffff_0x7fffffff",
        "0x7fffffff_0xbfffffff", "0xbfffffff_0xffffffff"]
    bounds = _halve(bounds, BundleRange(0x00000000, 0x3FFFFFFF))
    assert bounds[:3] == (0x00000000, 0x1FFFFFFF, 0x3FFFFFFF)


def test_split_bundle_by_fix_boundary() -> None:
    """``testSplitBundleByFixBoundary``: the bounds themselves are refused, lower + 10 works."""
    bundle = ranges_from_boundaries(default_boundaries(4))[0]
    for bad in (bundle.lower, bundle.upper):
        with pytest.raises(SplitError, match="strictly inside"):
            apply_boundaries(bundle, [bad])
    children = apply_boundaries(bundle, [bundle.lower + 10])
    assert children[0].lower == bundle.lower and children[1].lower == bundle.lower + 10


def test_split_keeps_the_rest_of_the_namespace() -> None:
    bounds = default_boundaries(4)
    after = split_namespace(bounds, BundleRange(0x40000000, 0x80000000), [0x50000000, 0x60000000])
    assert after == (0, 0x40000000, 0x50000000, 0x60000000, 0x80000000, 0xC0000000, 0xFFFFFFFF)


def test_refusals() -> None:
    with pytest.raises(SplitError, match="can't be split further"):
        apply_boundaries(BundleRange(5, 6), [])
    with pytest.raises(SplitError, match="given twice"):
        apply_boundaries(FULL_RANGE, [0x10, 0x10])
    with pytest.raises(SplitError, match="not one of the namespace's bundles"):
        split_namespace(default_boundaries(4), BundleRange(0, 0x20000000), [0x10000000])
