"""Words of ``RoundRobinBrokerSelector`` (:mod:`lbctl.strategies.placement.round_robin`)."""

from __future__ import annotations

from lbctl.explain.words.base import words
from lbctl.strategies.placement.round_robin import RotationWhy


@words.register
def rotation(w: RotationWhy) -> str:
    if w.code == "no-candidates":
        return "no candidate brokers"
    said = (f"counter {w.counter} → index {w.counter} % {w.size} = {w.index} in "
            f"[{', '.join(w.cache)}] → {w.pick}")
    if w.code == "resized":
        said += "; rotation list rebuilt from the candidates (size changed)"
    elif w.code == "stale":
        said += f"; rotation list rebuilt from the candidates ({w.stale} is no longer one)"
    return said
