"""The report's bounce-backs found among the moves alone (:func:`lbctl.fleet.report.bounced`) equal
the definition on every sample: a move whose new owner owned the bundle in one of the previous
2 … ``window`` samples (what ten ``lag`` columns computed before; pandas only, no Spark)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.fleet.report import bounced


def by_definition(owners: list[str], window: int) -> list[tuple[int, bool]]:
    """(position, bounced) of every move of one bundle's owner sequence (positions from 1)."""
    out = []
    for i in range(1, len(owners)):
        if owners[i] != owners[i - 1]:
            back = any(owners[i - k] == owners[i] for k in range(2, window + 1) if i - k >= 0)
            out.append((i + 1, back))
    return out


def moves_of(histories: dict[tuple[str, str], list[str]]) -> tuple[Any, list[bool]]:
    import pandas as pd

    rows, expected = [], []
    for (cluster, bundle), owners in sorted(histories.items()):
        for pos, back in by_definition(owners, WINDOW):
            rows.append((cluster, bundle, pos, owners[pos - 2], owners[pos - 1]))
            expected.append(back)
    frame = pd.DataFrame(rows, columns=["cluster", "bundle", "pos", "from_broker", "to_broker"])
    return frame, expected


WINDOW = 4

owners = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=14)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.dictionaries(st.tuples(st.sampled_from(["c1", "c2"]), st.sampled_from(["x", "y", "z"])),
                       owners, max_size=5))
def test_bounces_from_the_moves_equal_the_lag_definition(histories) -> None:
    frame, expected = moves_of(histories)
    assert list(bounced(frame, WINDOW)) == expected


def test_a_return_beyond_the_window_is_no_bounce_and_within_it_is() -> None:
    # a owns 1-2, b 3-6, back to a at 7: a was owner 5 samples before (lag 5) — within 10, not 4
    history = {("c", "x"): ["a", "a", "b", "b", "b", "b", "a"]}
    frame, _ = moves_of(history)
    assert list(bounced(frame, 10)) == [False, True]
    assert list(bounced(frame, 4)) == [False, False]
    assert list(bounced(frame.iloc[:0], 10)) == []
