"""What a move costs, and the caps on a plan.

Unloading a bundle disconnects its producers and consumers and makes the new owner load its
topics; bytes in flight dominate, so the cost of moving bundle *i* is, in bytes/s::

    cost_i = throughput_i + 1 % · T̄ · (1 + topics_i / t̄ + connections_i / c̄) / 3

``throughput`` is in + out bytes/s, ``connections`` producers + consumers; ``T̄``, ``t̄``, ``c̄``
are the cluster's mean per bundle. The second term is a small fixed price per move (1 % of an
average bundle's throughput, more for bundles with many topics or clients), so that between plans
moving the same bytes, the one with fewer moves and fewer disturbed clients wins, and a bundle
without traffic is not moved for nothing. ``--max-moves`` and ``--max-throughput`` cap a plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lbctl.planner.load import LoadView

MOVE_PRICE = 0.01


@dataclass(frozen=True)
class Costs:
    """Per bundle cost (bytes/s equivalents), in the load view's bundle order."""

    cost: tuple[float, ...]
    unit: float  # the mean bundle throughput the move price is scaled by

    @classmethod
    def of(cls, view: LoadView) -> Costs:
        n = len(view.bundles)
        if n == 0:
            return cls((), 1.0)
        import numpy as np

        tp = np.asarray(view.throughput, dtype=float)
        topics = np.asarray(view.topics, dtype=float)
        conns = np.asarray(view.connections, dtype=float)
        unit = max(float(tp.sum()) / n, 1.0)
        t_bar = max(float(topics.sum()) / n, 1.0)
        c_bar = max(float(conns.sum()) / n, 1.0)
        price = MOVE_PRICE * unit / 3
        cost = tp + price * (1 + topics / t_bar + conns / c_bar)
        return cls(tuple(cost.tolist()), unit)


@dataclass(frozen=True, slots=True)
class Totals:
    """What a set of moves disturbs."""

    moves: int
    throughput: float
    msg_rate: float
    topics: int
    connections: int
    cost: float

    @classmethod
    def of(cls, view: LoadView, costs: Costs, bundles: Sequence[int]) -> Totals:
        return cls(len(bundles), sum(view.throughput[i] for i in bundles),
                   sum(view.msg_rate[i] for i in bundles), sum(view.topics[i] for i in bundles),
                   sum(view.connections[i] for i in bundles),
                   sum(costs.cost[i] for i in bundles))

    def to_dict(self) -> dict[str, float | int]:
        return {"moves": self.moves, "throughput": round(self.throughput, 3),
                "msgRate": round(self.msg_rate, 3), "topics": self.topics,
                "connections": self.connections, "cost": round(self.cost, 3)}
