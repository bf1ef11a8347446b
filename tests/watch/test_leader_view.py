"""The leader's view of the load reports (:mod:`lbctl.watch.leader_view`): Pulsar's load-report
endpoint refreshes a report at each read (``ModularLoadManagerWrapper.generateLoadReport`` →
``LocalBrokerData.update``) and keeps ``lastUpdate`` at the last write; the leader decided on the
written one."""

from __future__ import annotations

from types import MappingProxyType

from lbctl.model.cluster import ClusterState
from lbctl.model.load import LocalBrokerData
from lbctl.model.wire.snapshot import NamespaceBundleStats
from lbctl.watch.leader_view import LeaderView, as_written

NS = "public/default"
B1, B2, B3 = (f"{NS}/0x{lo:08x}_0x{hi:08x}" for lo, hi in
              ((0, 0x40000000), (0x40000000, 0x80000000), (0x80000000, 0xFFFFFFFF)))


def _report(at: int, bundles: tuple[str, ...], *, cpu: float = 10.0,
            gains: tuple[str, ...] = (), losses: tuple[str, ...] = ()) -> LocalBrokerData:
    from lbctl.model.load import ResourceUsage

    return LocalBrokerData(cpu=ResourceUsage(cpu, 100.0), bundles=bundles,
                           lastStats=MappingProxyType({b: NamespaceBundleStats() for b in bundles}),
                           lastBundleGains=gains, lastBundleLosses=losses, lastUpdate=at)


def _state(at: int, **brokers: LocalBrokerData) -> ClusterState:
    return ClusterState("c", at, MappingProxyType(dict(brokers)))


def test_content_changed_under_the_same_lastUpdate_is_not_what_the_leader_read() -> None:
    view = LeaderView()
    first = view.of(_state(60_000, a=_report(50_000, (B1, B2)), b=_report(55_000, (B3,))))
    assert first.owners() == {B1: "a", B2: "a", B3: "b"}
    # B2 moved a → b after both writes: the endpoint shows it at once, the leader does not
    later = view.of(_state(120_000, a=_report(50_000, (B1,), cpu=5, losses=(B2,)),
                           b=_report(55_000, (B2, B3), cpu=20, gains=(B2,))))
    assert later.owners() == {B1: "a", B2: "a", B3: "b"}
    assert later.brokers["a"].cpu.usage == 10.0 and view.refreshed
    # a new write is what the leader reads next
    written = view.of(_state(180_000, a=_report(170_000, (B1,), cpu=5),
                             b=_report(55_000, (B2, B3), cpu=20, gains=(B2,))))
    assert written.brokers["a"].bundles == (B1,) and written.brokers["a"].lastUpdate == 170_000


def test_a_report_first_seen_after_a_move_is_taken_back_to_its_write() -> None:
    """The first capture of a ``lastUpdate`` already holds what changed since the write: its
    gains and losses (since the write: ``cleanDeltas`` runs after it) undo that."""
    view = LeaderView()
    state = view.of(_state(60_000, a=_report(50_000, (B1,), losses=(B2,)),
                           b=_report(55_000, (B2, B3), gains=(B2,))))
    assert state.owners() == {B1: "a", B2: "a", B3: "b"}
    assert B2 not in state.brokers["b"].lastStats


def test_reports_as_written_are_left_alone() -> None:
    """Served as written (an exported history), the deltas are those of the write itself: the
    bundles are the written ones already, and the state is the very one captured."""
    view = LeaderView(refreshed=False)
    s1 = _state(60_000, a=_report(50_000, (B1,), losses=(B2,)),
                b=_report(55_000, (B2, B3), gains=(B2,)))
    assert view.of(s1) is s1
    s2 = _state(120_000, a=_report(50_000, (B1,), losses=(B2,)),
                b=_report(55_000, (B2, B3), gains=(B2,)))
    assert view.of(s2) is s2 and not view.refreshed


def test_gained_then_lost_is_in_both_sets_and_was_not_written() -> None:
    """``LocalBrokerData.update`` adds to two sets: a bundle gained and lost since the write is
    in both and in neither the bundles now nor the written ones; one lost and gained back is in
    both and in both."""
    r = _report(50_000, (B1, B3), gains=(B2, B3), losses=(B2, B3))
    assert as_written(r) is r
    r = _report(50_000, (B1, B3), gains=(B3,), losses=(B2,))
    assert set(as_written(r).bundles) == {B1, B2}
