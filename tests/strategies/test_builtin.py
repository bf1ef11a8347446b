"""The built-in strategies are declared by name (:data:`lbctl.strategies.builtin.MODULES`) and
each module is imported when its strategy is first resolved: the declarations must name every
strategy a module registers, in the order the registries listed them when every module was
imported at once (completion and the "known:" list of an unknown name's error read that order)."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import pytest

from lbctl.errors import UsageError
from lbctl.strategies import placement, shedding, split
from lbctl.strategies.builtin import MODULES, PLACEMENT, SHEDDING, SPLIT
from lbctl.strategies.registry import Registry


def _import_every_strategy_module() -> None:
    for package in (shedding, placement, split):
        for module in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
            importlib.import_module(module.name)


@pytest.mark.parametrize("registry", [SHEDDING, PLACEMENT, SPLIT], ids=lambda r: r.kind)
def test_every_registered_strategy_is_declared_by_its_module(registry: Registry[object]) -> None:
    _import_every_strategy_module()
    declared = MODULES[registry.kind]
    assert registry.names() == list(declared)  # nothing registered without a declaration
    for name, module in declared.items():
        assert type(registry.create(name)).__module__ == module


def test_the_names_keep_the_order_of_the_eager_import() -> None:
    assert SHEDDING.names() == ["AvgShedder", "OverloadShedder", "ThresholdShedder",
                                "TransferShedder", "UniformLoadShedder"]
    assert PLACEMENT.names() == ["AvgShedder", "LeastLongTermMessageRate",
                                 "LeastResourceUsageWithWeight", "RoundRobinBrokerSelector"]
    assert SPLIT.names() == ["flow_or_qps_equally_divide", "range_equally_divide",
                             "specified_positions_divide", "topic_count_equally_divide"]


def test_a_declared_module_that_does_not_register_is_a_defect() -> None:
    registry: Registry[object] = Registry("shedding", "p")
    registry.declare({"Nothing": "lbctl.strategies.base"})
    assert registry.names() == ["Nothing"]
    with pytest.raises(RuntimeError, match="did not register shedding Nothing"):
        registry.create("Nothing")


@pytest.mark.slow
def test_a_strategy_module_is_imported_when_that_strategy_is_chosen() -> None:
    code = """
import sys
from lbctl.errors import UsageError
from lbctl.strategies.builtin import MODULES, PLACEMENT, SHEDDING, SPLIT
def loaded():
    every = {m for kind in MODULES.values() for m in kind.values()}
    return sorted(m.rsplit(".", 1)[1] for m in every if m in sys.modules)
print(loaded())
SHEDDING.names(), PLACEMENT.names(), SPLIT.names()
try:
    SHEDDING.short_name("Thresholdshedder")
except UsageError as e:
    print(e)
print(loaded())
print(SHEDDING.qualified_name("TransferShedder"), loaded())
print(type(PLACEMENT.create("LeastLongTermMessageRate")).__name__, loaded())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out == [
        "[]",
        "unknown shedding strategy 'Thresholdshedder' (did you mean ThresholdShedder?); known: "
        "AvgShedder, OverloadShedder, ThresholdShedder, TransferShedder, UniformLoadShedder",
        "[]",
        "org.apache.pulsar.broker.loadbalance.extensions.scheduler.TransferShedder ['transfer']",
        "LeastLongTermMessageRate ['least_long_term_message_rate', 'transfer']",
    ]


def test_an_unknown_name_lists_every_declared_one() -> None:
    with pytest.raises(UsageError, match="known: AvgShedder, LeastLongTermMessageRate, "
                                         "LeastResourceUsageWithWeight, RoundRobinBrokerSelector"):
        PLACEMENT.short_name("org.apache.pulsar.broker.loadbalance.impl.Nope")
