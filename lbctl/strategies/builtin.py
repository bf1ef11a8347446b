"""The built-in strategies, imported once so that they register themselves; import the registries
from here.

Shedding (``…loadbalance.impl`` unless noted): OverloadShedder, ThresholdShedder, UniformLoadShedder,
AvgShedder, TransferShedder (``…extensions.scheduler``). Placement: LeastLongTermMessageRate,
LeastResourceUsageWithWeight, RoundRobinBrokerSelector, AvgShedder. Split algorithms
(``org.apache.pulsar.common.naming``): range_equally_divide, topic_count_equally_divide,
specified_positions_divide, flow_or_qps_equally_divide.
"""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.strategies.placement import (  # noqa: F401 (registration)
    least_long_term_message_rate,
    least_resource_usage_with_weight,
    round_robin,
)
from lbctl.strategies.registry import PLACEMENT, SHEDDING, SPLIT
from lbctl.strategies.shedding import avg, overload, threshold, transfer, uniform  # noqa: F401
from lbctl.strategies.split import (  # noqa: F401 (registration)
    flow_or_qps_equally_divide,
    range_equally_divide,
    specified_positions_divide,
    topic_count_equally_divide,
)
from lbctl.strategies.split.base import RANGE_EQUALLY_DIVIDE, SplitAlgorithm

__all__ = ["PLACEMENT", "SHEDDING", "SPLIT", "algorithm_by_name", "algorithm_of"]


def algorithm_of(name: str | None) -> SplitAlgorithm | None:
    """``NamespaceBundleSplitAlgorithm.of``: the algorithm of exactly that name, else ``None``."""
    if name is None or name not in SPLIT.names():
        return None
    return SPLIT.create(name)


def algorithm_by_name(name: str | None, settings: Settings) -> SplitAlgorithm:
    """``NamespaceService.getNamespaceBundleSplitAlgorithmByName``: the named algorithm, else the
    broker's ``defaultNamespaceBundleSplitAlgorithm``, else range_equally_divide."""
    algo = algorithm_of(name) or algorithm_of(settings["defaultNamespaceBundleSplitAlgorithm"])
    return algo or SPLIT.create(RANGE_EQUALLY_DIVIDE)
