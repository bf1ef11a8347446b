"""Java ``int`` arithmetic (:mod:`lbctl.model.javaint`): the figures Pulsar's split checks and
UniformLoadShedder compute. The JDK's own answers are in ``test_javaint_jdk.py``."""

from __future__ import annotations

from lbctl.model.javaint import INT_MAX, INT_MIN, d2i, int_add, int_mul

MIBI = 1024 * 1024  # LoadManagerShared.MIBI (an int)


def test_cast_and_add() -> None:
    assert d2i(2.9) == 2 and d2i(-2.9) == -2
    assert d2i(1e20) == INT_MAX and d2i(-1e20) == INT_MIN
    assert d2i(float("nan")) == 0
    assert int_add(INT_MIN, -1) == INT_MAX  # wraps like Java int arithmetic
    assert int_add(5, d2i(-2.7)) == 3


def test_bandwidth_limit_wraps() -> None:
    """``loadBalancerNamespaceBundleMaxBandwidthMbytes * MIBI`` in ``int``: the figures the issue
    names (2048 MB → -2^31, 4096 MB → 0) and one past them."""
    assert int_mul(100, MIBI) == 100 * MIBI
    assert int_mul(2047, MIBI) == 2047 * MIBI
    assert int_mul(2048, MIBI) == -(2**31)
    assert int_mul(4096, MIBI) == 0
    assert int_mul(6000, MIBI) == 6000 * MIBI - 2**32 > 0  # positive again, but smaller
    assert int_add(INT_MAX, 1, 0) == INT_MIN  # consumerCount + producerCount
