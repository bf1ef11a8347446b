"""The modular candidate set's order when the thread-local secondaries set has the longer table,
against the JDK.

``LoadManagerShared.applyNamespacePolicies`` (LoadManagerShared at 01f1d8fab668 and
b3659d4a5624) collects a policy's secondaries — or, for a namespace without a policy, the shared
brokers — in the thread-local ``localSecondaryCache``, cleared (its table kept) at each call, and
``addAll`` s it to ``brokerCandidateCache``, walking it in its own order. A policy that does not
fail over still fills that set with every secondary but adds none of them, so the set can grow
longer than the candidate set ever did; from then on the secondaries and the shared brokers come,
within a bucket of the candidate set, by the buckets of that longer table. ``java/PolicyFill.java``
(plain JDK, no Pulsar: three kept ``HashSet`` s, cleared and refilled in that shape) gives the
JDK's order over random sequences of fills; lbctl's
(:func:`lbctl.strategies.placement.filters.policy_candidates` over a
:class:`~lbctl.strategies.placement.filters.PlacementEnv` with both tables, tracked as
``ModularLoadManager._filled`` tracks them) must be the same. Skipped, with the reason shown by
``pytest -rs``, without ``javac``/``java``."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from lbctl.config import Settings
from lbctl.model.javaorder import cleared_capacity, hashset_copy_order
from lbctl.model.policies import ClusterPolicies, IsolationPolicy
from lbctl.strategies.placement.filters import PlacementEnv, policy_candidates
from tests.factories import broker, load
from tests.jdk import needs_jdk, run_java

JAVA = Path(__file__).parent / "java"

pytestmark = needs_jdk("the secondaries set's table is not checked against HashSet")

#: primaries and secondaries of policy "iso", reserved brokers (primaries of policy "other",
#: never shared; the wide form of "iso" takes the res ones as secondaries too, never the oth
#: ones) and plain shared ones
KINDS = {"p": "prim", "s": "sec", "r": "res", "o": "oth", "h": "shr"}
POOL = {k: [f"{v}-{i}.pulsar-broker.pulsar.svc.cluster.local:8080" for i in range(150)]
        for k, v in KINDS.items()}


def policies(min_limit: int, wide: bool) -> ClusterPolicies:
    """"iso" (its secondaries: the sec brokers, and the reserved ones too when ``wide``) and
    "other", whose primaries are the reserved brokers."""
    secondaries = ("sec-.*", "res-.*") if wide else ("sec-.*",)
    return ClusterPolicies((
        IsolationPolicy(("iso/.*",), ("prim-.*",), secondaries, min_limit=min_limit, name="iso"),
        IsolationPolicy(("other/.*",), ("res-.*", "oth-.*"), name="other")))


@pytest.fixture(scope="module")
def jdk(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    build = tmp_path_factory.mktemp("scratchtable")
    return lambda lines: run_java("PolicyFill", build, lines, where=JAVA)


def _line(cid: str, min_limit: int, names: list[str], fill: str) -> str:
    """A PolicyFill line: a policy fill marks iso's primaries p and its secondaries s, a fill
    without a policy (``fill`` "shared") marks the shared brokers h."""
    marks = {"wide": {"prim": "p", "sec": "s", "res": "s"}, "narrow": {"prim": "p", "sec": "s"},
             "shared": {"sec": "h", "shr": "h"}}[fill]
    return "\t".join([cid, str(min_limit),
                      *(f"{marks.get(b.split('-', 1)[0], 'n')}:{b}" for b in names)])


Fills = list[tuple[str, int]]  # (wide, narrow or shared; min_limit) in order


def _orders(sequences: list[tuple[list[str], Fills]]) -> tuple[list[str], dict[str, list[str]],
                                                               dict[str, list[str]]]:
    """The PolicyFill script of these fill sequences (one leader each), lbctl's candidates of
    each fill, and lbctl's without the secondaries set's table. The tables are tracked as
    ``ModularLoadManager._filled`` tracks them."""
    settings = Settings.defaults()
    script: list[str] = []
    ours: dict[str, list[str]] = {}
    without: dict[str, list[str]] = {}
    for c, (names, fills) in enumerate(sequences):
        script.append("NEW")
        data = load({b: broker(cpu=(10, 100)) for b in names})
        available = tuple(hashset_copy_order(names))
        tables = (0, 0)
        for k, (fill, min_limit) in enumerate(fills):
            pol = policies(min_limit, fill == "wide")
            ns = "open/ns" if fill == "shared" else "iso/ns"
            # the fill's sizes (the brokers it adds, the secondaries set's), as the manager counts
            plain = policy_candidates(ns, PlacementEnv.of(available, data, pol, settings), data)
            why = plain.why
            scratch = len(why.others) if why is not None and why.code == "isolation" \
                else len(plain.brokers)
            tables = (cleared_capacity(tables[0], len(plain.brokers)),
                      cleared_capacity(tables[1], scratch))
            cap = max(tables[0], 16)
            env = PlacementEnv.of(available, data, pol, settings, cap,
                                  tables[1] if tables[1] > cap else 0)
            cid = f"{c}-{k}"
            ours[cid] = list(policy_candidates(ns, env, data).brokers)
            flat = PlacementEnv.of(available, data, pol, settings, cap)
            without[cid] = list(policy_candidates(ns, flat, data).brokers)
            script.append(_line(cid, min_limit, names, fill))
    return script, ours, without


def test_a_longer_secondaries_table_orders_later_fills(jdk) -> None:  # type: ignore[no-untyped-def]
    """Random sequences of fills on one set of brokers (one leader, one thread): fills for the
    policy namespace (failing over or not) and for a namespace without a policy. Every fill's
    candidates are the JDK's, in order."""
    rng = random.Random(1818)
    sequences: list[tuple[list[str], Fills]] = []
    for _ in range(150):
        # many oth brokers: the brokers' own copy (getAvailableBrokers) has a longer table than
        # the secondaries set, whose order then differs from the copy's within a bucket
        counts = {"p": rng.choice([0, 1, 2, 3, 6, rng.randint(0, 20)]),
                  "s": rng.choice([2, 5, 9, 12, rng.randint(0, 30)]),
                  "r": rng.choice([0, 30, 60, 90, rng.randint(0, 120)]),
                  "o": rng.choice([0, 0, 50, 100, rng.randint(0, 150)]),
                  "h": rng.choice([0, 1, 3, 8, rng.randint(0, 12)])}
        names = [b for k, n in counts.items() for b in rng.sample(POOL[k], n)]
        rng.shuffle(names)
        if not names:
            continue
        fills: Fills = []
        for _ in range(rng.randint(1, 7)):
            # a wide fill without failover grows the secondaries set past the candidate set
            fill = rng.choice(["wide", "narrow", "shared"])
            fills.append((fill, rng.choice([0, 0, 0, 1, 8, rng.randint(0, 25)] if fill == "wide"
                                           else [0, 1, 8, rng.randint(0, 25)])))
        sequences.append((names, fills))
    script, ours, without = _orders(sequences)
    java = jdk(script)
    wrong = [cid for cid in ours if ours[cid] != java[cid]]
    assert not wrong, f"{len(wrong)} of {len(ours)} fills differ from the JDK: {wrong[:5]}"
    # teeth: without the secondaries set's table, some fills come in another order
    differ = [cid for cid in ours if without[cid] != java[cid]]
    assert len(differ) >= 10, (len(differ), len(ours))
