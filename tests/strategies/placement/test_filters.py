"""``remove_most_servicing`` (``LoadManagerShared.removeMostServicingBrokersForNamespace``): the
same candidates and the same step whether the caller hands it the candidates as a set (the
answer is then an ``Excluding`` view of the candidates without the owners) or not (a tuple)."""

from __future__ import annotations

import pickle
from random import Random

import pytest

from lbctl.model.candidates import Excluding
from lbctl.model.decision import FilterStep
from lbctl.strategies.placement.filters import remove_most_servicing


@pytest.mark.parametrize("seed", range(60))
def test_a_view_gives_the_same_candidates(seed: int) -> None:
    rng = Random(seed)
    brokers = [f"broker-{i}:8080" for i in range(rng.randint(1, 40))]
    cands = tuple(rng.sample(brokers, rng.randint(1, len(brokers))))
    owners = {b: rng.randint(1, 3) for b in rng.sample(brokers, rng.randint(0, len(brokers)))}
    index = {"t/ns": owners}
    plain: list[FilterStep] = []
    fast: list[FilterStep] = []
    expected = remove_most_servicing(cands, "t/ns", index, plain)
    got = remove_most_servicing(cands, "t/ns", index, fast, frozenset(cands))
    assert isinstance(expected, tuple)
    assert got == expected and expected == got and fast == plain
    assert tuple(got) == expected and len(got) == len(expected) and list(got) == list(expected)
    least = min(owners.get(b, 0) for b in cands)
    assert expected == tuple(b for b in cands if owners.get(b, 0) == least)  # the rule itself
    for b in brokers:
        assert (b in got) == (b in expected)
    if expected:
        assert got[0] == expected[0] and got[-1] == expected[-1] and got[1:] == expected[1:]


def test_the_view_is_a_sequence_of_its_names() -> None:
    base = ("a", "b", "c", "d")
    v = Excluding(base, frozenset({"b", "d"}), frozenset(base))
    assert len(v) == 2 and list(v) == ["a", "c"] and v == ("a", "c") and v == ["a", "c"]
    assert v != ("a", "b") and hash(v) == hash(("a", "c")) and repr(v) == "('a', 'c')"
    assert "a" in v and "b" not in v and "z" not in v
    assert v.index("c") == 1 and v.count("a") == 1 and list(reversed(v)) == ["c", "a"]
    assert pickle.loads(pickle.dumps(v)) == ("a", "c")
