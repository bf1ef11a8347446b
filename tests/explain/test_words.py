"""The words of every reason record (:mod:`lbctl.explain.words`).

The golden outputs pin the sentences the bundled examples reach; these tests reach the rest: every
code of every reason record has words, and the figures a record carries are the ones its sentence
shows.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
import typing
from typing import Any

import pytest
from msgspec import structs

import lbctl.model.decision as decision
import lbctl.strategies
from lbctl.explain.words import text, words
from lbctl.explain.words.split import split_detail
from lbctl.model.bundle import BundleRange
from lbctl.model.decision import Reason, SplitCandidate, Why
from lbctl.strategies.placement.filters import FilterWhy, VersionProblem
from lbctl.strategies.placement.least_long_term_message_rate import LeastWhy
from lbctl.strategies.placement.least_resource_usage_with_weight import WeightedWhy
from lbctl.strategies.placement.versions import Version
from lbctl.strategies.shedding._select import GreedyWhy, Offload
from lbctl.strategies.shedding.avg import Amount, Gate, Pair
from lbctl.strategies.shedding.threshold import ThresholdWhy
from lbctl.strategies.shedding.transfer import TransferWhy
from lbctl.strategies.shedding.uniform import UniformPickWhy, UniformWhy
from lbctl.strategies.split.base import BoundaryWhy
from lbctl.strategies.split.default_namespace_bundle_split_strategy import CheckWhy

MB = 1024 * 1024


def _reason_types() -> list[type[Why]]:
    """Every reason record lbctl defines: the strategies' and the load managers'."""
    for m in pkgutil.walk_packages(lbctl.strategies.__path__, "lbctl.strategies."):
        importlib.import_module(m.name)
    found: list[type[Why]] = []
    todo = list(Why.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    assert {decision.CycleWhy, decision.AdminSplitWhy} <= set(found)
    return sorted(found, key=lambda c: c.__qualname__)


#: sample figures by type, for records whose fields need more than a default
_PAIR = Pair("a", "b", 10.0, 60.0, 50.0, True, True, 15.0, 40.0)
_GATE = Gate((("a", 1, 0), ("b", 2, 1)), 2, 3)
_SAMPLES: dict[Any, Any] = {
    Pair: _PAIR, Gate: _GATE,
    Amount: Amount(900.0, 100.0, 9 * MB, MB, 0.5, 400.0, 4 * MB, 1000.0, MB, True),
    BundleRange: BundleRange(0x10, 0x20), Version: Version(3, 1, 2), Reason: Reason.TOPICS,
    Offload: "shed", VersionProblem: "invalid",
}


def _sample(hint: Any) -> Any:
    """A sample value of a field's type (the first non-None member of an optional, the first
    value of a literal)."""
    if typing.get_origin(hint) is typing.Literal:
        return typing.get_args(hint)[0]
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return None if Why in args else _sample(args[0])
    if hint in _SAMPLES:
        return _SAMPLES[hint]
    if typing.get_origin(hint) is tuple:
        one = _sample(typing.get_args(hint)[0])
        return () if one is None else (one, one)
    return {float: 1.5, int: 2, str: "a", bool: True}.get(hint)


def _every(cls: type[Why]) -> list[Why]:
    """One record of ``cls`` per code, every other field with a sample figure."""
    hints = typing.get_type_hints(cls)
    codes = typing.get_args(hints["code"])
    assert codes, f"{cls.__name__}.code is not a Literal of its codes"
    figures = {f.name: _sample(hints[f.name]) for f in structs.fields(cls) if f.name != "code"}
    figures = {k: v for k, v in figures.items() if v is not None}
    if "broker" in figures and "gate" in figures:  # AvgShedder: a broker of its pair
        figures["broker"] = "a"
    return [cls(code=code, **figures) for code in codes]


@pytest.mark.parametrize("cls", _reason_types(), ids=lambda c: c.__qualname__)
def test_every_code_of_every_reason_has_words(cls: type[Why]) -> None:
    said = [words(w) for w in _every(cls)]
    assert all(isinstance(s, str) and s for s in said)


def test_a_reason_without_words_is_refused() -> None:
    class Unworded(Why, frozen=True):
        code: str = "x"

    with pytest.raises(TypeError, match="no words for Unworded"):
        words(Unworded())


def test_text_of_nothing_and_of_words_already_made() -> None:
    assert text(None) == ""
    assert text("the solver's status") == "the solver's status"  # lbctl's planner's notes


def test_a_shared_record_is_worded_once() -> None:
    shared = GreedyWhy("enough", 0.0, 8 * MB, 8 * MB)
    first = text(shared)
    assert text(shared) is first
    assert first == "not needed: 8.0 MB/s already selected ≥ 8.0 MB/s"
    assert text(GreedyWhy("enough", 0.0, 8 * MB, 8 * MB)) == first  # an equal record: same words


# --- the figures feed the sentence ------------------------------------------------------------
def test_threshold_words_its_figures() -> None:
    w = ThresholdWhy("below-trigger", usage=0.42, smoothed=0.455, average=0.5,
                     trigger=0.6, percent=10)
    assert words(w) == ("usage 42.0% (smoothed 45.5%) is below average 50.0% + threshold 10% "
                        "= 60.0%")
    over = ThresholdWhy("offload", 0.9, 0.8, 0.5, 0.6, 10, fraction=0.25,
                        throughput=40 * MB, need=10 * MB, offload="one-bundle",
                        then=ThresholdWhy("lower-none"))
    assert words(over) == (
        "usage 90.0% (smoothed 80.0%) ≥ average 50.0% + threshold 10% = 60.0%; it should "
        "offload 25.0% of its 40.0 MB/s = 10.0 MB/s, but it has only 1 bundle: Pulsar never "
        "sheds a single-bundle broker; lower-boundary shedding found no bundle it may shed")


def test_a_setting_is_shown_as_configured() -> None:
    """A percentage configured as an int prints as one, a double as a double."""
    as_int = ThresholdWhy("note-lower-average", average=0.5, trigger=0.4, percent=10)
    as_double = ThresholdWhy("note-lower-average", average=0.5, trigger=0.4,
                             percent=10.5)
    assert "average - 10% = 40.0%" in words(as_int)
    assert "average - 10.5% = 40.0%" in words(as_double)


def test_uniform_words_the_criterion_it_sheds_by() -> None:
    rate = UniformWhy("budget-low", True, rate=1500.0, throughput=2 * MB, budget=10,
                      minimum=1000)
    tp = UniformWhy("budget-low", False, rate=1500.0, throughput=2 * MB, budget=10,
                    minimum=1000)
    assert words(rate) == ("msg rate 1500.0 msg/s, throughput 2.0 MB/s: highest msg rate, but "
                           "the budget 10.0 msg/s < minUnloadMessage 1000")
    assert words(tp).endswith("highest throughput, but the budget 0.0 MB/s < "
                              "minUnloadMessageThroughput 1000")
    fits = UniformPickWhy("fits", True, remaining=300, left=100)
    assert words(fits) == "fits the remaining budget 300.0 msg/s; 100.0 msg/s left"


def test_lltmr_joins_a_sets_notes_once() -> None:
    notes = (LeastWhy("overloaded", broker="b1", usage=0.91, threshold=0.85),
             LeastWhy("no-load-data", broker="b2"))
    a = LeastWhy("tie", "b3", ("b3", "b4"), 120.0, notes)
    b = LeastWhy("lowest", "b4", ("b4",), 120.0, notes)
    assert words(a) == ("b3, b4 tie at the lowest long-term message rate 120.0 msg/s: uniform "
                        "random pick → b3; b1 is overloaded (usage 91% > 85%) → +inf; b2 has no "
                        "load data → +inf")
    assert words(b).endswith("; b1 is overloaded (usage 91% > 85%) → +inf; b2 has no load "
                             "data → +inf")


def test_lruw_lists_the_best_with_their_usage() -> None:
    w = WeightedWhy("below", 0.433, 0.05, ("1", "2"), (0.1, 0.2), "2", (), 0.85,
                    ("3",), (0.9,), ("ghost",))
    assert words(w) == (
        "mean smoothed usage of the candidates 43.3%; at least 5% below it: 1 (10.0%), "
        "2 (20.0%) → random pick 2; above the overload threshold 85% (Pulsar only logs it): "
        "3 (90.0%); no load data (counted as 100%): ghost")


def test_transfer_nests_the_conditions_it_tested() -> None:
    under = TransferWhy("not-under", "b1", "b9", 0.3, 0.4, 0.05, 2e6, 9e6)
    over = TransferWhy("not-over", "b9", load=0.5, threshold=0.85, avg=0.4, target=0.25)
    w = TransferWhy("balanced", std=0.1, target=0.25, inner=under, then=over)
    assert words(w) == (
        "balanced: std 0.1000 <= loadBalancerBrokerLoadTargetStd 0.25; b1 is not underloaded: "
        "load 0.3000 >= avg×0.05 = 0.0200 and throughput EMA 2,000,000 >= 450,000 B/s; b9 is not "
        "overloaded: load 0.5000 vs threshold 0.85 and avg + targetStd 0.6500")


def test_split_check_carries_the_algorithms_reason() -> None:
    inner = BoundaryWhy("few-topics", 1)
    w = CheckWhy("not-one-boundary", algorithm="topic_count_equally_divide", inner=inner)
    assert words(w) == ("topic_count_equally_divide gave no boundary; the split strategy needs "
                        "exactly one (Failure/Unknown): the bundle has 1 topic(s); at least 2 are "
                        "needed to split")
    two = CheckWhy("not-one-boundary", algorithm="flow_or_qps_equally_divide",
                   boundaries=(0x10, 0x20))
    assert words(two) == ("flow_or_qps_equally_divide gave 2 boundaries (0x00000010, 0x00000020); "
                          "the split strategy needs exactly one (Failure/Unknown)")


@pytest.mark.parametrize(("reason", "limit", "want"), [
    (Reason.TOPICS, 1000, "Topics: 1001/1000"),
    (Reason.SESSIONS, 1000, "Sessions: (600+401)/1000"),
    (Reason.MSG_RATE, 30000, "Message Rate: 49976/30000 msg/s"),
    (Reason.BANDWIDTH, 100, "Message Throughput: 110/100 MB/s"),
])
def test_split_detail_shows_the_figure_against_its_limit(reason: Reason, limit: int,
                                                         want: str) -> None:
    c = SplitCandidate("t/ns/0x00000000_0xffffffff", "b1", reason, limit, 1001, 600, 401,
                       49976.0, 110 * MB)
    assert split_detail(c) == want


def test_version_filter_words_pulsars_exception() -> None:
    w = FilterWhy("version-failed", problem="invalid", broker="b1",
                  detail="3.x")
    assert words(w) == ('failed (Invalid version string in load report for broker "b1": '
                        '"3.x"): candidates restored')
    assert words(FilterWhy("older-version", newest=Version(3, 1, 2))) == (
        "removed brokers older than the newest version 3.1.2")
