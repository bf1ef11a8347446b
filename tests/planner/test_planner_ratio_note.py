"""A plan says when the reports' history cannot tell a byte's cost from a message's
(``LoadModel.ratio_error`` infinite: the brokers' message sizes barely changed), and is silent
when the history tells it or when there is no history (a snapshot is calibrated, not learnt)."""

from __future__ import annotations

import math

from lbctl.config import resolve
from lbctl.model.loadmodel import LoadModel
from lbctl.planner.propose import ProposeOptions, propose
from lbctl.sources.snapshot import read_snapshots
from tests.model.test_loadmodel import _steady_mix_history
from tests.paths import EXAMPLES

NOTE = "does not tell what a byte costs against a message"


def _notes(history: list) -> list[str]:
    state = history[-1]
    p = propose(state, resolve(state.config), ProposeOptions(solver="greedy"),
                history=history)
    return list(p.notes)


def test_a_history_of_unchanging_mixes_says_so() -> None:
    history = read_snapshots([str(EXAMPLES / "two-brokers-90-10.jsonl")])
    assert LoadModel.learn(history).ratio_error == math.inf
    assert any(NOTE in n for n in _notes(history))


def test_a_history_that_tells_the_ratio_and_a_lone_snapshot_say_nothing() -> None:
    history = next(h for h, _ in (_steady_mix_history(s, 8) for s in range(1, 20))
                   if math.isfinite(LoadModel.learn(h).ratio_error))
    assert not any(NOTE in n for n in _notes(history))
    assert not any(NOTE in n for n in _notes(history[-1:]))
