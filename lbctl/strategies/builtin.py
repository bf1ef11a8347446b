"""The built-in strategies, imported once so that they register themselves; import the registries
from here.

Every module of :mod:`lbctl.strategies.shedding`, :mod:`~lbctl.strategies.placement` and
:mod:`~lbctl.strategies.split` is imported (the packages are walked, so a new strategy module needs
no line anywhere else). Today: shedding (``…loadbalance.impl`` unless noted) OverloadShedder,
ThresholdShedder, UniformLoadShedder, AvgShedder, TransferShedder (``…extensions.scheduler``);
placement LeastLongTermMessageRate, LeastResourceUsageWithWeight, RoundRobinBrokerSelector,
AvgShedder; split algorithms (``org.apache.pulsar.common.naming``) range_equally_divide,
topic_count_equally_divide, specified_positions_divide, flow_or_qps_equally_divide.
"""

from __future__ import annotations

import importlib
import pkgutil

from lbctl.config import Settings
from lbctl.strategies import placement, shedding, split
from lbctl.strategies.registry import PLACEMENT, SHEDDING, SPLIT
from lbctl.strategies.split.base import (
    FLOW_OR_QPS_EQUALLY_DIVIDE,
    RANGE_EQUALLY_DIVIDE,
    SplitAlgorithm,
)

for _package in (shedding, placement, split):
    for _module in pkgutil.iter_modules(_package.__path__, _package.__name__ + "."):
        importlib.import_module(_module.name)

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
