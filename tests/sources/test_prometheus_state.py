"""A rebuilt snapshot's state made from its typed parts (``lbctl.sources.prometheus.state``):
the very state — fields, reprs and the reader's name index — the checked reading makes of the
same snapshot, and ``None`` (the checked reading) whenever a check of the brokers could say
something: a name not learned yet, a system namespace, a bundle twice, overlapping ranges, a
count beyond a Java int, a non-finite usage, a ``namespaces`` section, an empty broker id."""

from __future__ import annotations

import copy
import functools
from typing import Any

import msgspec
import pytest

from lbctl.admin.prometheus import PrometheusClient
from lbctl.errors import SnapshotError
from lbctl.model.cluster import ClusterState
from lbctl.model.wire.java import INT_MAX
from lbctl.model.wire.snapshot import Document
from lbctl.sources.prometheus.history import PrometheusHistory
from lbctl.sources.prometheus.state import DirectStates
from lbctl.sources.snapshot_schema import LearnedNames, state_from_wire
from tests.sources.test_prometheus_output import BUNDLES, REQ, STEPS, fake


def snapshots(max_points: int = 100) -> list[dict[str, Any]]:
    """The fake history's snapshots (a bundle moving, two carriers at one step, a broker not
    scraped at one step), clean and plain, their observed decisions added (a copy each time)."""
    return copy.deepcopy(_snapshots(max_points))


@functools.cache
def _snapshots(max_points: int) -> list[dict[str, Any]]:
    with PrometheusClient("http://prom", transport=fake(), max_points=max_points) as c:
        out = []
        for snap, clean, plain in PrometheusHistory(c, REQ).built():
            assert clean and plain
            out.append(snap)
        return out


def reader(learned: LearnedNames) -> Any:
    def read(snap: dict[str, Any], where: str) -> ClusterState:
        return state_from_wire(msgspec.convert(snap, Document), where, learned=learned)
    return read


def index(state: ClusterState) -> Any:
    """The reader's name index, as values (and whether it describes the state's brokers)."""
    n = state.names
    assert n is not None
    return (n.brokers is state.brokers, n.bundles, dict(n.system),
            {b: dict(s) for b, s in n.stats.items()},
            None if n.owned is None else list(n.owned.items()))


@pytest.mark.parametrize("max_points", [100, 5], ids=["one-chunk", "chunks-of-5"])
def test_the_states_made_directly_are_the_checked_reading_s(max_points: int) -> None:
    checked = reader(LearnedNames())
    learned = LearnedNames()
    direct = DirectStates(learned, reader(learned))
    made = 0
    for snap in snapshots(max_points):
        where = f"prometheus:{snap['capturedAt']}"
        want = checked(snap, where)
        got = direct.state(snap, where)
        if got is None:  # the first snapshot: its names are learned by reading it
            got = direct.read(snap, where)
        else:
            made += 1
            assert got.names is not None and got.names.stats[next(iter(got.brokers))] is \
                snap["brokers"][next(iter(got.brokers))]["lastStats"]
        assert got == want and repr(got) == repr(want) and index(got) == index(want)
    assert made == STEPS - 1


def split(snap: dict[str, Any]) -> None:
    """The first bundle split in two (its halves not seen before)."""
    rep = snap["brokers"]["b1:8080"]
    stats = rep["lastStats"].pop(BUNDLES[0])
    for half in ("t/ns/0x00000000_0x20000000", "t/ns/0x20000000_0x40000000"):
        rep["lastStats"][half] = stats
    rep["bundles"] = list(rep["lastStats"])
    rep["numBundles"] = len(rep["lastStats"])


def twice(snap: dict[str, Any]) -> None:
    b2 = snap["brokers"]["b2:8080"]
    b2["lastStats"][BUNDLES[0]] = snap["brokers"]["b1:8080"]["lastStats"][BUNDLES[0]]
    b2["bundles"] = list(b2["lastStats"])


def renamed(snap: dict[str, Any], old: str, new: str) -> None:
    brokers = snap["brokers"]
    snap["brokers"] = {new if b == old else b: rep for b, rep in brokers.items()}


@pytest.mark.parametrize("change", [
    split,
    twice,
    lambda s: s["brokers"]["b1:8080"].update(numTopics=INT_MAX + 1),
    lambda s: s["brokers"]["b1:8080"].update(numConsumers=-1),
    lambda s: s["brokers"]["b2:8080"].update(msgRateIn=float("inf")),
    lambda s: s["brokers"]["b2:8080"]["cpu"].update(usage=float("nan")),
    lambda s: s["brokers"]["b2:8080"].update(lastUpdate=10**20),
    lambda s: renamed(s, "b2:8080", ""),
    lambda s: s.update(namespaces={"t/ns": {"boundaries": ["0x00000000", "0xffffffff"],
                                            "numBundles": 1}}),
], ids=["split", "twice", "topics>int", "consumers<0", "rate-inf", "usage-nan", "time>max",
        "empty-broker-id", "namespaces"])
def test_what_a_check_of_the_brokers_could_refuse_is_read_the_checked_way(change: Any) -> None:
    """After a first snapshot read the checked way (its names learned), a snapshot changed so
    that a check of its brokers would speak (or is not known to stay silent) is not made
    directly."""
    first, second, *_ = snapshots()
    learned = LearnedNames()
    direct = DirectStates(learned, reader(learned))
    direct.read(first, "first")
    assert direct.state(copy.deepcopy(second), "second") is not None  # unchanged: made directly
    changed = copy.deepcopy(second)
    change(changed)
    assert direct.state(changed, "second") is None


def test_system_namespaces_and_overlapping_ranges_are_read_the_checked_way() -> None:
    """Names already learned but in a system namespace (counted by the reader's index), or
    after ranges that overlap were learned (a split seen earlier): the checked reading."""
    first, second, *_ = snapshots()
    learned = LearnedNames()
    direct = DirectStates(learned, reader(learned))
    system = copy.deepcopy(first)
    renamed_bundle = "pulsar/system/0x00000000_0x40000000"
    rep = system["brokers"]["b1:8080"]
    rep["lastStats"] = {renamed_bundle if n == BUNDLES[0] else n: s
                        for n, s in rep["lastStats"].items()}
    rep["bundles"] = list(rep["lastStats"])
    state = direct.read(system, "system")
    assert state.names is not None and dict(state.names.system) == {"pulsar/system": 1}
    assert direct.state(copy.deepcopy(system), "again") is None
    direct.read(first, "first")
    assert direct.state(copy.deepcopy(second), "second") is not None
    halves = copy.deepcopy(second)
    split(halves)
    direct.read(halves, "halves")  # learns ranges inside one already learned
    assert direct.state(copy.deepcopy(second), "second") is None
    with pytest.raises(SnapshotError, match="not to overlap"):
        both = copy.deepcopy(halves)
        both["brokers"]["b1:8080"]["lastStats"][BUNDLES[0]] = \
            second["brokers"]["b1:8080"]["lastStats"][BUNDLES[0]]
        both["brokers"]["b1:8080"]["bundles"] = list(both["brokers"]["b1:8080"]["lastStats"])
        direct.state(both, "both") or direct.read(both, "both")


@pytest.mark.parametrize(("change", "made"), [
    (lambda s: s["brokers"]["b1:8080"].update(numTopics=INT_MAX + 1), True),
    (lambda s: s["brokers"]["b2:8080"]["cpu"].update(usage=float("nan")), True),
    (split, False),
    (twice, False),
    (lambda s: renamed(s, "b2:8080", ""), False),
], ids=["topics>int", "usage-nan", "split", "twice", "empty-broker-id"])
def test_figures_vouched_for_are_not_looked_at_again_and_names_still_are(
        change: Any, made: bool) -> None:
    """``figures_checked``: the caller (a history's clean, plain snapshot, its figures checked
    column by column) vouches for the usages, sums and times, which are then not gathered
    again; the names, the owners and the broker ids are still checked."""
    first, second, *_ = snapshots()
    learned = LearnedNames()
    direct = DirectStates(learned, reader(learned))
    direct.read(first, "first")
    changed = copy.deepcopy(second)
    change(changed)
    assert (direct.state(changed, "second", figures_checked=True) is not None) is made
    assert direct.valid(copy.deepcopy(changed), "second", figures_checked=True) is made
