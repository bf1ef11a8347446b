"""How numbers are written for people and for JSON: one place for percentages, MB/s and rates.

Conventions (Pulsar's own, where it has one):

* a *fraction* (0.425) is shown as a percentage with one decimal: ``pct(0.425)`` → ``42.5%``;
* a *throughput* is bytes/s, shown in MB/s where 1 MB = 1024 × 1024 bytes (``LoadManagerShared.MIBI``,
  ``FlowOrQpsEquallyDivideBundleSplitAlgorithm.MBytes``);
* a missing figure (``None``) or one that is not a number (NaN: a broker without load data) is
  ``-`` in text and ``null`` in JSON (:func:`rounded`); an infinite one is ``inf`` in text.
"""

from __future__ import annotations

import math

MB = 1024 * 1024
DASH = "-"


def _missing(x: float | None) -> bool:
    return x is None or math.isnan(x)


def pct(fraction: float | None, digits: int = 1) -> str:
    """A fraction as a percentage: 0.425 → "42.5%"; None/NaN → "-"; ±inf → "inf"/"-inf"."""
    if fraction is None or math.isnan(fraction):
        return DASH
    if math.isinf(fraction):
        return "inf" if fraction > 0 else "-inf"
    return f"{fraction * 100:.{digits}f}%"


def pct_whole(fraction: float) -> str:
    """A threshold as a person writes it: "10%" when whole, else one decimal ("7.5%"); an
    infinite or NaN figure (a report Pulsar's float arithmetic overflows) as "inf"/"NaN"."""
    if not math.isfinite(fraction):
        return pct(fraction) if math.isinf(fraction) else "NaN"
    x = fraction * 100
    if not math.isfinite(x):  # Java's double arithmetic can reach Infinity/NaN: print it
        return "NaN" if math.isnan(x) else ("Infinity%" if x > 0 else "-Infinity%")
    return f"{x:.0f}%" if x == round(x) else f"{x:.1f}%"


def number(x: float | None, digits: int = 2, *, grouped: bool = True) -> str:
    """A plain figure, "-" when missing: 21503.99 → "21,503.99" (``grouped``) or "21503.99"."""
    if _missing(x):
        return DASH
    return f"{x:,.{digits}f}" if grouped else f"{x:.{digits}f}"


def rate(x: float | None, digits: int = 1) -> str:
    """A message rate (msg/s), grouped: 35955.68 → "35,955.7"; "-" when missing."""
    return number(x, digits)


def mb(bytes_per_s: float | None, digits: int = 2) -> str:
    """A throughput in MB/s, grouped, without the unit: 57671680 → "55.00"; "-" when missing."""
    if bytes_per_s is None or math.isnan(bytes_per_s):
        return DASH
    return f"{bytes_per_s / MB:,.{digits}f}"


def mb_s(bytes_per_s: float) -> str:
    """A throughput as Pulsar's shedders log it: "55.0 MB/s" (3 significant digits when huge)."""
    x = bytes_per_s / MB
    if math.isfinite(x) and abs(x) >= 1e9:
        return f"{x:.3g} MB/s"
    return f"{x:.1f} MB/s"


def msg_s(rate_value: float) -> str:
    """A message rate as Pulsar's shedders log it: "6144.0 msg/s" (3 significant when huge)."""
    if math.isfinite(rate_value) and abs(rate_value) >= 1e12:
        return f"{rate_value:.3g} msg/s"
    return f"{rate_value:.1f} msg/s"


def whole(x: float) -> str:
    """A figure as Pulsar's logs print it: whole numbers without decimals, else one decimal;
    past the double range (a sum of figures near 1.7e308) as Java's ``%f`` prints it."""
    if not math.isfinite(x):  # round() raises on these
        return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
    return f"{x:.0f}" if abs(x - round(x)) < 0.05 else f"{x:.1f}"


def short(x: float) -> str:
    """A setting value as a person writes it: 40, 0.5, 15.5 (``%g``)."""
    return f"{x:g}"


def rounded(x: float | None, digits: int = 6) -> float | None:
    """A figure for JSON: rounded; ``None`` when missing, NaN or infinite (JSON has neither)."""
    if x is None or math.isnan(x) or math.isinf(x):
        return None
    return round(x, digits)
