"""The greedy bundle selector shared by ThresholdShedder and OverloadShedder.

Pulsar has no test of its own for it (it is inlined in both shedders); these pin the rules of
spec §4 "Common greedy selector": candidates, short-term throughput, stable descending order over
the shedding map's Java order, at least one bundle, stop once the running sum reaches the amount.
"""

from __future__ import annotations

from lbctl.config import MB
from lbctl.explain.words import text
from lbctl.model.decision import Reason
from lbctl.model.javaorder import JavaHashMap, concurrent_order, hashmap_order, java_hash_order
from lbctl.strategies.shedding._select import select_greedy, shedding_candidates
from tests.factories import broker, bundle_data, load

HEARTBEAT = "pulsar/broker-a:8080/0x00000000_0xffffffff"


def one_broker(values: dict[str, float], **extra):
    """Broker ``b`` owning bundles with these short-term throughputs (in only)."""
    bundles = {name: bundle_data(tp, 0.0, 1.0, 2.0) for name, tp in values.items()}
    brokers = {"b": broker(bundle_names=tuple(values) + extra.pop("more", ()))}
    brokers.update(extra.pop("others", {}))
    bundles.update(extra.pop("other_bundles", {}))
    return load(brokers, bundle_data=bundles, **extra)


def run(ld, amount: float):
    return select_greedy(ld, "b", ld.brokers["b"], amount)


def test_takes_the_largest_until_the_sum_reaches_the_amount():
    ld = one_broker({"x/y/a": 2 * MB, "x/y/b": 5 * MB, "x/y/c": 3 * MB})
    got = run(ld, 8 * MB)
    assert [s.bundle for s in got.selections] == ["x/y/b", "x/y/c"]
    assert got.marked == 8 * MB
    c = {x.bundle: x for x in got.candidates}
    assert not c["x/y/a"].chosen
    assert text(c["x/y/a"].why) == "not needed: 8.0 MB/s already selected ≥ 8.0 MB/s"
    assert text(c["x/y/c"].why) == "selected: 5.0 MB/s so far < 8.0 MB/s needed"
    assert text(c["x/y/b"].why).startswith("largest eligible bundle (5.0 MB/s)")


def test_always_at_least_one_bundle():
    ld = one_broker({"x/y/a": 2 * MB, "x/y/b": 5 * MB})
    assert [s.bundle for s in run(ld, 0.0).selections] == ["x/y/b"]
    assert [s.bundle for s in run(ld, -1.0).selections] == ["x/y/b"]


def test_takes_everything_when_the_amount_is_never_reached():
    ld = one_broker({"x/y/a": 2 * MB, "x/y/b": 5 * MB})
    got = run(ld, 100 * MB)
    assert [s.bundle for s in got.selections] == ["x/y/b", "x/y/a"]


def test_selection_values_are_short_term_figures():
    ld = one_broker({"x/y/a": 2 * MB})
    (sel,) = run(ld, 1.0).selections
    assert (sel.broker, sel.reason, sel.throughput, sel.msg_rate) == (
        "b",
        Reason.OVERLOADED,
        2 * MB,
        3.0,
    )
    under = select_greedy(ld, "b", ld.brokers["b"], 1.0, Reason.UNDERLOADED)
    assert under.selections[0].reason == Reason.UNDERLOADED


def test_ignores_other_brokers_bundles():
    ld = one_broker(
        {"x/y/a": MB},
        others={"c": broker(bundle_names=("x/y/big",))},
        other_bundles={"x/y/big": bundle_data(100 * MB)},
    )
    got = run(ld, 50 * MB)
    assert [s.bundle for s in got.selections] == ["x/y/a"]
    assert all(c.broker == "b" for c in got.candidates)


def test_recently_unloaded_are_skipped_and_reported():
    ld = one_broker({"x/y/a": 2 * MB, "x/y/b": 5 * MB}, recently_unloaded={"x/y/b": 1})
    got = run(ld, 1.0)
    assert [s.bundle for s in got.selections] == ["x/y/a"]
    (skipped,) = [c for c in got.candidates if c.bundle == "x/y/b"]
    assert not skipped.chosen and skipped.value == 5 * MB
    assert "recently unloaded" in text(skipped.why)


def test_bundles_the_loop_never_sees_are_reported():
    ld = one_broker(
        {"x/y/a": MB, HEARTBEAT: 100 * MB},
        more=("x/y/nodata",),
    )
    got = run(ld, 1.0)
    assert [s.bundle for s in got.selections] == ["x/y/a"]
    why = {c.bundle: text(c.why) for c in got.candidates}
    assert "system namespace" in why[HEARTBEAT]
    assert "no bundle data" in why["x/y/nodata"]
    assert len(got.candidates) == 3


def test_ties_keep_the_shedding_map_order():
    """Equal throughputs keep Java's order: ``{"1/1/…", "2/2/…"}`` iterates 2/2 first (the order
    ``ModularLoadManagerImplTest#testLoadShedding`` relies on, spec §10)."""
    names = ["1/1/0x00000000_0xffffffff", "2/2/0x00000000_0xffffffff"]
    ld = one_broker(dict.fromkeys(names, MB))
    got = run(ld, 100 * MB)
    assert [s.bundle for s in got.selections] == list(reversed(names))
    # larger values still come first, whatever the map order
    ld = one_broker({names[0]: 2 * MB, names[1]: MB})
    assert [s.bundle for s in run(ld, 100 * MB).selections] == names


def test_candidates_follow_the_shedding_map_order():
    """``Collectors.toMap``: a HashMap filled one put at a time from the ConcurrentHashMap of all
    bundle data (system bundles counted in the source only), not a presized copy."""
    names = [f"t/ns/b{i}" for i in range(12)]
    ld = one_broker(dict.fromkeys([*names, HEARTBEAT], MB), more=("t/ns/nodata",))
    order = shedding_candidates(ld, ld.brokers["b"].local.bundles)
    source = [k for k in concurrent_order([*names, HEARTBEAT]) if k != HEARTBEAT]
    assert order == java_hash_order(source) == hashmap_order(source)
    assert HEARTBEAT not in order and "t/ns/nodata" not in order
    # 12 keys: 16 buckets when filled one by one, 32 for a presized copy; the orders differ here
    assert order != JavaHashMap.copy_of(source).keys()


def test_pulsar_system_is_never_a_candidate():
    """``LoadData.getBundleDataForLoadShedding`` leaves out every namespace
    ``NamespaceService.isSystemServiceNamespace`` names, ``pulsar/system`` included (PR #15252,
    Pulsar 2.11+); Pulsar 2.10 left out only heartbeat and SLA-monitor namespaces."""
    from lbctl.records import replace

    system = "pulsar/system/0x00000000_0x40000000"
    ld = one_broker({system: 9 * MB, "x/y/a": MB, HEARTBEAT: 5 * MB})
    got = run(ld, 100 * MB)
    assert [s.bundle for s in got.selections] == ["x/y/a"]
    why = {c.bundle: text(c.why) for c in got.candidates if not c.chosen}
    assert "never shed" in why[system] and "never shed" in why[HEARTBEAT]
    old = replace(ld, pulsar_system=False)
    assert [s.bundle for s in run(old, 100 * MB).selections] == [system, "x/y/a"]


def test_nan_ranks_first_like_double_compare():
    ld = one_broker({"x/y/a": 2 * MB, "x/y/nan": float("nan"), "x/y/b": 5 * MB})
    got = run(ld, 1.0)
    # NaN sorts first; the running sum is then NaN, never < the amount: nothing more is added
    assert [s.bundle for s in got.selections] == ["x/y/nan"]


def test_value_aware_order_sorts_like_the_full_order():
    """Replaying a bucket's order is only needed for keys that also tie on the sort value: the
    stable sort by value gives the same list either way (5,000 bundles: the lazy per-bucket
    replay of ``ConcurrentOrder``, not the full simulation)."""
    import random

    rng = random.Random(7)
    names = [f"t{i % 40}/ns{i % 7}/0x{rng.getrandbits(32):08x}_0xffffffff" for i in range(5000)]
    values = {n: float(rng.choice([1, 2, 3])) for n in names}
    ld = load({"b": broker(bundle_names=tuple(names))},
              bundle_data={n: bundle_data(values[n]) for n in names})
    for _ in range(20):
        subset = rng.sample(names, 300)
        full = sorted(ld.shedding_order(subset), key=lambda n: -values[n])
        lazy = sorted(ld.shedding_order(subset, values.__getitem__), key=lambda n: -values[n])
        assert full == lazy


def test_only_tied_throughputs_need_the_map_order(monkeypatch):
    """The ranking is by value; the shedding map's Java order only decides among bundles that
    tie on it (equal values, ``0.0`` and ``-0.0``, NaN), so only those are put in that order
    (a Java hash of each name) — none when no two tie. Either way the selection and every
    candidate equal a stable sort of the map's order of all of them by ``Double.compare``
    descending."""
    import math
    import random
    from collections import Counter

    from lbctl.model.loaddata import LoadData
    from lbctl.strategies.shedding import _select
    from lbctl.strategies.shedding._select import descending

    asked: list[list[str]] = []
    full_order = LoadData.shedding_order

    def spy(self, bundles, value=None):
        bundles = list(bundles)
        asked.append(bundles)
        return full_order(self, bundles, value)

    rng = random.Random(11)
    pools = {1: [1.0, 2.0], 2: [0.0, -0.0, 1.0, 2.5, math.nan], 3: [0.0, -0.0, math.nan]}
    for case in range(120):
        n = rng.randrange(2, 120)
        names = [f"t{rng.randrange(5)}/ns{rng.randrange(9)}/0x{rng.getrandbits(32):08x}_0xffffffff"
                 for _ in range(n)]
        kind = case % 4  # 0: all distinct; 1, 2: mostly ties; 3: distinct but a few idle ones
        values = {x: (rng.uniform(0, 9) * MB
                      if kind == 0 or (kind == 3 and rng.random() < 0.7)
                      else float(rng.choice(pools[kind])))
                  for x in names}
        ld = one_broker(values, more=("t0/ns0/nodata",))
        # the throughput is tp_in + tp_out (0.0 here): a -0.0 tp_in becomes 0.0
        values = {x: v + 0.0 for x, v in values.items()}
        _select._RANKED.clear()
        asked.clear()
        with monkeypatch.context() as m:
            m.setattr(LoadData, "shedding_order", spy)
            got = run(ld, rng.uniform(0, 50) * MB)
        def tie(v: float) -> object:  # Double.compare's ties: NaN with NaN, -0.0 apart
            return "nan" if math.isnan(v) else ("-0" if str(v) == "-0.0" else v)

        ties = Counter(map(tie, values.values()))
        tied = {x for x, v in values.items() if ties[tie(v)] > 1}
        assert [set(a) for a in asked] == ([tied] if tied else []), case
        order = full_order(ld, list(values))
        expected = sorted(order, key=lambda x: descending(values[x]))
        ranked = [c.bundle for c in got.candidates if c.bundle in values]
        assert ranked == expected, case


# --- the C-speed partition of a shed broker's bundles (issue 30, item 5) ---------------------------
_NAMESPACES = ("x/y", "x/z", "pulsar/system", "pulsar/broker-a:8080", "t/n")


def _random_load(seed: int):
    """Two brokers over random bundles of a few namespaces (system ones among them sometimes),
    some listed in ``bundles`` without stats, the load data a view of first samples or a plain
    dict of bundle data, and some bundles split away."""
    import random

    from lbctl.records import replace
    from tests.factories import stats

    rng = random.Random(seed)
    spaces = _NAMESPACES if rng.random() < 0.5 else ("x/y", "x/z", "t/n")
    names = list(dict.fromkeys(
        f"{rng.choice(spaces)}/0x{lo:08x}_0x{lo + 1:08x}"
        for lo in (rng.randrange(1 << 31) for _ in range(rng.randrange(1, 40)))))
    own = {n: stats(tp_in=rng.choice((1.0, 2.0, 3.0 * MB, rng.random())),
                    tp_out=rng.random()) for n in names if rng.random() < 0.8}
    listed = tuple(n for n in names if n not in own)
    brokers = {"b": broker(bundles=own, bundle_names=tuple(own) + listed),
               "c": broker(bundles={"q/r/0x00000000_0xffffffff": stats(tp_in=1.0)})}
    if rng.random() < 0.5:
        ld = load(brokers)  # the cycle's view of first samples
    else:
        ld = load(brokers, bundle_data={n: bundle_data(1.0, 2.0, 3.0, 4.0) for n in own})
    if rng.random() < 0.3:
        ld = replace(ld, split_away=frozenset(rng.sample(names, min(3, len(names)))))
    return ld, ld.brokers["b"].local.bundles


def test_the_partition_of_a_broker_s_bundles_is_is_sheddable_s():
    """The sheddable bundles (``LoadData.is_sheddable``) and the others, each in the broker's
    order (``LoadData.split_sheddable``'s C-speed passes), on loads with and without system
    bundle data or bundles split away; and their values are the short-term throughputs one
    bundle at a time."""
    from lbctl.strategies.shedding._select import (
        _partition,
        _ranking,
        _short_term_throughput_of,
    )

    fast = 0
    for seed in range(300):
        ld, bundles = _random_load(seed)
        expected = ([b for b in bundles if ld.is_sheddable(b)],
                    [b for b in bundles if not ld.is_sheddable(b)])
        assert _partition(ld, bundles) == expected, seed
        assert _partition(ld, iter(bundles)) == expected, seed
        fast += ld.system_bundles == 0 and not ld.split_away
        ranked, values, other = _ranking(ld, bundles)
        assert sorted(ranked) == sorted(expected[0]) and other == expected[1], seed
        assert values == list(map(_short_term_throughput_of(ld), ranked)), seed
    assert 50 < fast < 250  # loads of both kinds were met
