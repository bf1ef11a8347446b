"""The state sources (:mod:`lbctl.sources.base` and its implementations): one read gives the
states — a list, or a sequence streamed a snapshot at a time — and the lines to report."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext

import pytest

from lbctl.model.cluster import ClusterState
from lbctl.sources.base import StateRead, Streamed
from lbctl.sources.files import SnapshotFiles, snapshot_files
from lbctl.sources.snapshot import read_snapshots
from tests.paths import EXAMPLES

SEQ = EXAMPLES / "two-brokers-90-10.jsonl"


class _Stream:
    def __init__(self, states: list[ClusterState]):
        self._states = states
        self.headers = tuple(states)

    def __len__(self) -> int:
        return len(self._states)

    def states(self) -> Iterator[ClusterState]:
        yield from self._states


def test_a_read_is_a_list_or_a_stream() -> None:
    states = read_snapshots([SEQ])
    streamed = StateRead(_Stream(states), warnings=("w",))
    assert isinstance(streamed.sequence, Streamed) and not isinstance(states, Streamed)
    assert len(streamed) == len(states) and streamed.states == states
    assert streamed.last == states[-1] == StateRead(states).last
    assert StateRead(states, ("b: down",), ("w",)).report == ["b: down", "w"]


def test_snapshot_files() -> None:
    source = snapshot_files([SEQ])
    assert source == SnapshotFiles((SEQ,)) and not source.live and source.what == "the snapshots"
    got = source.read()
    assert got.states == read_snapshots([SEQ]) and got.report == []


def test_a_large_sequence_is_streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lbctl.sources.snapshot_stream.STREAM_BYTES", 0)
    got = snapshot_files([SEQ], stream=True).read()
    assert isinstance(got.sequence, Streamed)
    assert got.states == read_snapshots([SEQ])


@pytest.mark.live
def test_the_live_cluster() -> None:
    from lbctl.admin.client import AdminClient
    from lbctl.sandbox import hot_cluster
    from lbctl.sources.cluster import LiveCluster, on_client

    c = hot_cluster(3)
    try:
        steps: list[tuple[str, int, int]] = []
        source = LiveCluster(lambda: AdminClient(c.admin_url), topics=False)
        assert source.live and source.what == "the cluster"
        got = source.read(lambda s, d, t: steps.append((s, d, t)))
        assert set(got.last.brokers) == set(c.brokers) and got.failures == ()
        assert steps and not got.last.topics  # progress reported; no topic stats asked
        with AdminClient(c.admin_url) as client:
            assert on_client(client).read().last.cluster == got.last.cluster
            assert on_client(client).read().last.topics  # the client stays open between reads
    finally:
        c.stop()


def test_prometheus_range_reads_its_reference_first(monkeypatch: pytest.MonkeyPatch) -> None:
    from lbctl.sources.prometheus.request import HistoryRequest, Report
    from lbctl.sources.prometheus.source import PrometheusRange

    seen: list[object] = []

    def read_history(client, req, progress):
        seen.append((client, req.reference.origin, sorted(req.reference.namespaces)))
        return read_snapshots([SEQ]), Report(warnings=["partial answer"])

    monkeypatch.setattr("lbctl.sources.prometheus.output.read_history", read_history)
    ref = SnapshotFiles((EXAMPLES / "hot-broker.json",))
    source = PrometheusRange(lambda: nullcontext("client"), HistoryRequest(0, 60_000), ref,
                             "hot-broker.json")
    got = source.read()
    assert not source.live and source.what == "Prometheus"
    assert got.states == read_snapshots([SEQ]) and got.warnings == ("partial answer",)
    [(client, origin, namespaces)] = seen
    assert client == "client" and origin == "hot-broker.json" and namespaces
