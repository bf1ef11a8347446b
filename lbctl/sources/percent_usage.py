"""A usage/limit pair whose Java ``percentUsage`` is a published percentage, bit for bit.

Why: Prometheus (``pulsar_lb_*_usage``) and the extensible broker's metrics export only the
percentage ``ResourceUsage.percentUsage()`` computed (``(float) usage / (float) limit * 100f``);
a rebuilt ``LocalBrokerData``/``BrokerLoadData`` needs a usage and a limit that give that very
float back, or Pulsar's strategies would read a different figure. One search serves both readers
(:mod:`lbctl.sources.prometheus.history`, :mod:`lbctl.sources.live_extensible`)."""

from __future__ import annotations

import math
import struct

from lbctl.model.load import f32

_F32 = struct.Struct("<f")
_I32 = struct.Struct("<i")
_I32_MIN, _I32_MAX = -(2**31), 2**31 - 1
#: the candidates tried around the first one, in ulps of a Java float, in this order
_NUDGES = (0, 1, -1, 2, -2, 3, -3, 4, -4)


def usage_for(percent: float, limit: float = 100.0) -> dict[str, float]:
    """``{"usage", "limit"}`` whose 32-bit ``percentUsage`` is ``percent`` exactly (the exported
    figure is that float): the float nearest ``percent/100 × limit``, nudged by a few ulps when
    rounding needs it; else against a limit of 100 (what a live extensible broker's rebuilt
    report always uses: its metrics carry no limit). Called five times per broker and step: the search
    computes ``ResourceUsage.percent`` without a record and a cache entry per candidate."""
    target = f32(percent)
    if limit != 100.0:
        u = _nudged(target, f32(target / 100.0 * f32(limit)), limit)
        if u is not None:
            return {"usage": u, "limit": limit}
    u = _nudged(target, target, 100.0)
    return {"usage": target if u is None else u, "limit": 100.0}


def _nudged(target: float, first: float, limit: float) -> float | None:
    """The first of ``first`` (a Java float) and the floats up to 4 ulps around it whose
    ``ResourceUsage(u, limit).percent`` is ``target``."""
    den = f32(limit)
    pack, unpack = _F32.pack, _F32.unpack
    bits: int | None = None
    for step in _NUDGES:
        if step:
            if bits is None:
                bits = _I32.unpack(pack(first))[0]
            if not _I32_MIN <= bits + step <= _I32_MAX:  # past -0.0's bits: no such neighbour
                continue
            u: float = unpack(_I32.pack(bits + step))[0]
        else:
            u = first
        if not math.isfinite(u):
            continue
        # ResourceUsage.percent (lbctl.model.load): (float)usage / (float)limit * 100f, each
        # step rounded to a Java float (u is one already), saturating to ±infinity as f32 does
        p = 0.0
        if limit > 0:
            if den == 0.0:
                p = math.nan if u == 0.0 else math.copysign(math.inf, u)
            else:
                q = u / den
                try:
                    p = unpack(pack(q))[0]
                except OverflowError:
                    p = math.copysign(math.inf, q)
        r = p * 100.0
        try:
            r = unpack(pack(r))[0]
        except OverflowError:
            r = math.copysign(math.inf, r)
        if r == target:
            return u
    return None
