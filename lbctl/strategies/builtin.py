"""The built-in strategies, declared by name with the module that registers each; import the
registries from here.

A strategy's module is imported when that strategy is first resolved or created
(:meth:`lbctl.strategies.registry.Registry.declare`): a ``recommend`` imports the shedder and the
placement it runs, not all nine modules. A new strategy module is one line in :data:`MODULES`
(``tests/strategies/test_builtin.py`` fails on a module that registers a name not
declared here). Today: shedding (``…loadbalance.impl`` unless noted) AvgShedder,
OverloadShedder, ThresholdShedder, TransferShedder (``…extensions.scheduler``),
UniformLoadShedder; placement AvgShedder, LeastLongTermMessageRate, LeastResourceUsageWithWeight,
RoundRobinBrokerSelector; split algorithms (``org.apache.pulsar.common.naming``)
flow_or_qps_equally_divide, range_equally_divide, specified_positions_divide,
topic_count_equally_divide.
"""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.strategies.registry import PLACEMENT, SHEDDING, SPLIT
from lbctl.strategies.split.base import (
    FLOW_OR_QPS_EQUALLY_DIVIDE,
    RANGE_EQUALLY_DIVIDE,
    SPECIFIED_POSITIONS_DIVIDE,
    TOPIC_COUNT_EQUALLY_DIVIDE,
    SplitAlgorithm,
)

_S = "lbctl.strategies."

#: each registry's built-in names (by its kind) → the module that registers the name, in the order
#: the names are listed (completion, ``did you mean``, an error's known names): the order they had
#: when every module was imported at once, by package then module name
MODULES: dict[str, dict[str, str]] = {
    SHEDDING.kind: {"AvgShedder": _S + "shedding.avg",
                    "OverloadShedder": _S + "shedding.overload",
                    "ThresholdShedder": _S + "shedding.threshold",
                    "TransferShedder": _S + "shedding.transfer",
                    "UniformLoadShedder": _S + "shedding.uniform"},
    PLACEMENT.kind: {"AvgShedder": _S + "shedding.avg",
                     "LeastLongTermMessageRate": _S + "placement.least_long_term_message_rate",
                     "LeastResourceUsageWithWeight":
                         _S + "placement.least_resource_usage_with_weight",
                     "RoundRobinBrokerSelector": _S + "placement.round_robin"},
    SPLIT.kind: {n: _S + "split." + n for n in (
        FLOW_OR_QPS_EQUALLY_DIVIDE, RANGE_EQUALLY_DIVIDE, SPECIFIED_POSITIONS_DIVIDE,
        TOPIC_COUNT_EQUALLY_DIVIDE)},
}
SHEDDING.declare(MODULES[SHEDDING.kind])
PLACEMENT.declare(MODULES[PLACEMENT.kind])
SPLIT.declare(MODULES[SPLIT.kind])

__all__ = ["PLACEMENT", "SHEDDING", "SPLIT", "algorithm_by_name", "algorithm_of"]


def algorithm_of(name: str | None) -> SplitAlgorithm | None:
    """``NamespaceBundleSplitAlgorithm.of``: the algorithm of exactly that name, else ``None``."""
    if name is None or name not in SPLIT.names():
        return None
    return SPLIT.create(name)


def algorithm_by_name(name: str | None, settings: Settings) -> SplitAlgorithm:
    """``NamespaceService.getNamespaceBundleSplitAlgorithmByName``: the named algorithm, else the
    broker's ``defaultNamespaceBundleSplitAlgorithm``, else range_equally_divide. A release
    without flow_or_qps_equally_divide (before 3.0) does not know that name either."""
    def known(n: str | None) -> str | None:
        if n == FLOW_OR_QPS_EQUALLY_DIVIDE and not settings.profile["flowOrQps"]:
            return None
        return n

    algo = algorithm_of(known(name)) or algorithm_of(
        known(settings["defaultNamespaceBundleSplitAlgorithm"]))
    return algo or SPLIT.create(RANGE_EQUALLY_DIVIDE)
