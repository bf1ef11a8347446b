"""Java ``int`` arithmetic, where Pulsar's load balancer computes in ``int`` and Python would not.

A Java ``int`` is 32-bit two's complement: ``+``, ``-`` and ``*`` wrap around silently, and a
``(int)`` cast of a ``double`` truncates toward zero, saturates and maps NaN to 0. Pulsar relies on
this in places lbctl models, e.g. ``BundleSplitterTask`` and the extensible
``DefaultNamespaceBundleSplitStrategyImpl`` compute ``loadBalancerNamespaceBundleMaxBandwidthMbytes
* LoadManagerShared.MIBI`` (both ``int``) before widening to ``long``, so 2048 MB becomes -2^31
and 4096 MB becomes 0; ``consumerCount + producerCount`` is an ``int`` sum;
``UniformLoadShedder`` casts and adds in ``int``. The JDK's own figures are checked in
``tests/model/test_javaint_jdk.py``.
"""

from __future__ import annotations

import math

INT_MAX = 2**31 - 1
INT_MIN = -(2**31)


def int32(x: int) -> int:
    """The Java ``int`` an exact integer result wraps to (32-bit two's complement)."""
    return (x + 2**31) % 2**32 - 2**31


def int64(x: int) -> int:
    """The Java ``long`` an exact integer result wraps to (64-bit two's complement).

    ``LoadStats.update`` (extensible ``TransferShedder``) multiplies
    ``loadBalancerBrokerLoadDataTTLInSeconds`` and ``loadBalanceSheddingDelayInSeconds`` (both
    ``long``, any 64-bit value accepted) by 1000 and subtracts timestamps in ``long``: a TTL of
    ``Long.MAX_VALUE`` seconds, meant as "never outdated", is -1000 ms, and every broker is
    outdated. doctor's stale-load-report rule reads the same figures the same way."""
    return (x + 2**63) % 2**64 - 2**63


def int_add(*xs: int) -> int:
    """``a + b + …`` on Java ``int``s, left to right (wrapping at each step is the same as once)."""
    return int32(sum(xs))


def int_mul(a: int, b: int) -> int:
    """``a * b`` on Java ``int``s."""
    return int32(a * b)


def d2i(x: float) -> int:
    """Java's ``(int)`` cast of a double: NaN → 0, truncation toward zero, saturation."""
    if math.isnan(x):
        return 0
    if x >= INT_MAX:
        return INT_MAX
    if x <= INT_MIN:
        return INT_MIN
    return int(x)
