"""Words of ``RoundRobinBrokerSelector`` (:mod:`lbctl.strategies.placement.round_robin`)."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.strategies.placement.round_robin import Rotation, RotationWhy


@words.register
def rotation(w: RotationWhy) -> str:
    if w.code is Rotation.NO_CANDIDATES:
        return "no candidate brokers"
    said = (f"counter {w.counter} → index {w.counter} % {w.size} = {w.index} in "
            f"[{', '.join(w.cache)}] → {w.pick}")
    if w.code is Rotation.RESIZED:
        said += "; rotation list rebuilt from the candidates (size changed)"
    elif w.code is Rotation.STALE:
        said += f"; rotation list rebuilt from the candidates ({w.stale} is no longer one)"
    return said
