"""The one entry point from a reason record to its words: :func:`words` dispatches on the record's
type to the module of :mod:`lbctl.explain.words` that words it.

Those modules are imported when a record of theirs is first worded, not before: a command that
words a ThresholdShedder cycle loads ThresholdShedder's words alone (start-up matters: a small
``recommend`` costs little more than ``lbctl --help``). :data:`HOMES` says where each deciding
module's words live.
"""

from __future__ import annotations

import importlib
from functools import singledispatch

from lbctl.model.decision import Why

#: the module that defines reason records → the words module (of this package) that words them
HOMES = {
    "lbctl.model.decision": "cycle",
    "lbctl.strategies.shedding._select": "select",
    "lbctl.strategies.shedding.threshold": "threshold",
    "lbctl.strategies.shedding.overload": "overload",
    "lbctl.strategies.shedding.uniform": "uniform",
    "lbctl.strategies.shedding.avg": "avg",
    "lbctl.strategies.shedding.transfer": "transfer",
    "lbctl.strategies.placement.least_long_term_message_rate": "least_long_term_message_rate",
    "lbctl.strategies.placement.least_resource_usage_with_weight":
        "least_resource_usage_with_weight",
    "lbctl.strategies.placement.round_robin": "round_robin",
    "lbctl.strategies.placement.extensible_least_resource_usage":
        "extensible_least_resource_usage",
    "lbctl.strategies.placement.filters": "filters",
    "lbctl.strategies.placement.broker_filters": "filters",
    "lbctl.strategies.placement.namespace_policies": "namespace_policies",
    "lbctl.strategies.split.bundle_splitter_task": "split",
    "lbctl.strategies.split.default_namespace_bundle_split_strategy": "split",
    "lbctl.strategies.split.base": "split_algorithms",
    "lbctl.strategies.simple.decide": "simple",
}
_LOADED: set[str] = set()


@singledispatch
def words(why: Why) -> str:
    """The sentence of one reason record (each words module registers its record types; the
    first record of a type not registered yet loads its module)."""
    home = HOMES.get(type(why).__module__)
    if home is None or home in _LOADED:
        raise TypeError(f"no words for {type(why).__name__}: register them in "
                        "lbctl.explain.words")
    _LOADED.add(home)
    importlib.import_module(f"lbctl.explain.words.{home}")
    return words(why)


#: the words of the records worded last (by identity, holding each record so that its id is not
#: reused): a record is often one object shared by many decisions — the greedy loop's "not
#: needed", a namespace's filter step for each of its bundles placed — and is worded once
_SAID: dict[int, tuple[Why, str]] = {}
_SAID_LIMIT = 4096


def text(why: Why | str | None) -> str:
    """:func:`words` of a reason that may be absent (``""``) or already in words (a note of
    lbctl's planner, which is no strategy)."""
    if why is None:
        return ""
    if isinstance(why, str):
        return why
    hit = _SAID.get(id(why))
    if hit is not None and hit[0] is why:
        return hit[1]
    if len(_SAID) >= _SAID_LIMIT:
        _SAID.clear()
    said = words(why)
    _SAID[id(why)] = (why, said)
    return said
