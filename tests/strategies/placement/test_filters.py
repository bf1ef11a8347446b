"""``remove_most_servicing`` (``LoadManagerShared.removeMostServicingBrokersForNamespace``): the
same candidates and the same step whether the caller hands it the candidates' positions (owners
cut out by slicing) or not (a membership test per candidate)."""

from __future__ import annotations

from random import Random

import pytest

from lbctl.model.decision import FilterStep
from lbctl.strategies.placement.filters import remove_most_servicing


@pytest.mark.parametrize("seed", range(60))
def test_positions_give_the_same_candidates(seed: int) -> None:
    rng = Random(seed)
    brokers = [f"broker-{i}:8080" for i in range(rng.randint(1, 40))]
    cands = tuple(rng.sample(brokers, rng.randint(1, len(brokers))))
    owners = {b: rng.randint(1, 3) for b in rng.sample(brokers, rng.randint(0, len(brokers)))}
    index = {"t/ns": owners}
    plain: list[FilterStep] = []
    fast: list[FilterStep] = []
    expected = remove_most_servicing(cands, "t/ns", index, plain)
    got = remove_most_servicing(cands, "t/ns", index, fast, frozenset(cands),
                                {b: i for i, b in enumerate(cands)})
    assert got == expected and fast == plain
    least = min(owners.get(b, 0) for b in cands)
    assert got == tuple(b for b in cands if owners.get(b, 0) == least)  # the rule itself
