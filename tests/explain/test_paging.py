"""``explain --page/--limit`` (lbctl.explain.paging) and the cut of a placement whose best
brokers are many (LeastResourceUsageWithWeight ties every broker within its threshold)."""

from __future__ import annotations

import pytest

from lbctl.errors import UsageError
from lbctl.explain.modular import LIST_LIMIT, _placement_dict, _placement_lines
from lbctl.explain.paging import WHOLE, Pager
from lbctl.model.decision import FilterStep, PlacementDecision, PlacementTrace


def test_a_list_that_fits_is_whole_on_every_page() -> None:
    pager = Pager(3, 10)
    small = list(range(10))
    assert pager.take("small", small) is small
    assert pager.to_dict() is None and pager.text() is None
    long = list(range(45))
    assert pager.take("long", long) == list(range(20, 30))
    assert pager.to_dict() == {"number": 3, "limit": 10, "pages": 5, "lists": {"long": 45}}
    pager.check()
    assert "--page 4 for the next" in (pager.text() or "")


def test_the_longest_list_counts_the_pages_and_a_page_past_it_is_refused() -> None:
    pager = Pager(4, 10)
    assert pager.take("a", list(range(25))) == []
    pager.take("a", list(range(31)))  # a later cycle's longer list
    assert pager.pages == 4 and pager.totals == {"a": 31}
    pager.check()
    late = Pager(5, 10)
    late.take("a", list(range(31)))
    with pytest.raises(UsageError, match="--page 5: the explanation has 4 page"):
        late.check()


def test_no_paging_and_bad_arguments() -> None:
    everything = list(range(10_000))
    assert WHOLE.take("x", everything) is everything
    assert WHOLE.totals == {}
    with pytest.raises(UsageError):
        Pager(0, 10)
    with pytest.raises(UsageError):
        Pager(1, -1)


def test_a_cut_placement_names_at_most_the_limit_of_best_brokers() -> None:
    brokers = tuple(f"b{i}" for i in range(50))
    best = brokers[:40]
    dec = PlacementDecision("LeastResourceUsageWithWeight", "t/n/0x0_0x1", "b7", brokers,
                            dict.fromkeys(brokers, 0.1), best)
    trace = PlacementTrace("t/n/0x0_0x1", (FilterStep("f", brokers, brokers),), dec,
                           broker="b7")
    cut = _placement_dict(trace, full=False)
    assert cut is not None
    d = cut["decision"]
    assert d["best"] == list(best[:LIST_LIMIT]) and d["bestCount"] == 40
    assert set(d["scores"]) == set(best[:LIST_LIMIT])  # b7 is among them
    whole = _placement_dict(trace, full=True)
    assert whole is not None and whole["decision"]["best"] == list(best)
    assert "bestCount" not in whole["decision"]
    line = next(x for x in _placement_lines(trace, full=False) if "best " in x)
    assert line.endswith(f"b{LIST_LIMIT - 1} and 20 more")
