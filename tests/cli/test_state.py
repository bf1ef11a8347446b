"""The one choice of where state comes from (:func:`lbctl.cli.state.choose`): files, else
``--prometheus-url``, else the live cluster — announced where files could have been given."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from lbctl.cli.prometheus import PrometheusArgs
from lbctl.cli.state import (
    Chosen,
    FilesOrLive,
    HistoryInput,
    MonitorSnapshots,
    StateInput,
    choose,
)
from lbctl.errors import UsageError
from lbctl.sources.base import StateRead
from lbctl.sources.cluster import LiveCluster
from lbctl.sources.files import SnapshotFiles
from lbctl.sources.prometheus.source import PrometheusRange
from tests.paths import EXAMPLES

HOT = EXAMPLES / "hot-broker.json"
RANGE = PrometheusArgs("http://prom:9090", since="2h")


@pytest.fixture(autouse=True)
def _no_client_conf(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)


def test_files_first() -> None:
    chosen = choose(None, StateInput([HOT]), stream=True)
    assert chosen.source == SnapshotFiles((HOT,), stream=True) and chosen.note is None
    assert not chosen.source.live


def test_prometheus_when_its_url_is_given() -> None:
    chosen = choose(None, StateInput(prometheus=RANGE))
    assert isinstance(chosen.source, PrometheusRange) and chosen.note is None
    assert chosen.source.request.step_ms == 60_000 and chosen.source.reference is None


@pytest.mark.parametrize(("ref", "kind"), [("live", LiveCluster), (str(HOT), SnapshotFiles)])
def test_the_prometheus_reference_is_a_source_too(ref: str, kind: type) -> None:
    from lbctl.records import replace

    source = choose(None, HistoryInput(prometheus=replace(RANGE, reference=ref))).source
    assert isinstance(source, PrometheusRange) and isinstance(source.reference, kind)
    if kind is LiveCluster:
        assert source.reference.topics is False  # boundaries and settings only


def test_nothing_given_means_the_live_cluster_announced() -> None:
    for given in (StateInput(), FilesOrLive()):
        chosen = choose(None, given)
        assert isinstance(chosen.source, LiveCluster) and chosen.source.live
        assert chosen.note == "no snapshot given: reading the live cluster at http://localhost:8080"


def test_a_command_that_acts_on_the_cluster_goes_live_quietly() -> None:
    for chosen in (choose(None), choose(None, MonitorSnapshots(), topics=False, namespaces=False)):
        assert isinstance(chosen.source, LiveCluster) and chosen.note is None
    assert choose(None, topics=False).source.topics is False


@pytest.mark.parametrize(("given", "message"), [
    (HistoryInput(), "give snapshot files, or --prometheus-url with --since/--start (the live "
                     "cluster as a file: lbctl snapshot export -f snap.json)"),
    (StateInput([HOT], RANGE), "give snapshot files or --prometheus-url, not both"),
    (StateInput(prometheus=PrometheusArgs(since="2h")), "--since needs --prometheus-url"),
    (StateInput(prometheus=PrometheusArgs("http://p")),
     "--prometheus-url needs a time range: --since DURATION or --start TIME"),
])
def test_mistakes_are_usage_errors_before_any_read(given: object, message: str) -> None:
    with pytest.raises(UsageError) as e:
        choose(None, given)  # type: ignore[arg-type]
    assert str(e.value) == message


class _Source:
    live = True
    what = "the cluster"

    def read(self, progress=None) -> StateRead:
        from lbctl.sources.snapshot import read_snapshots

        return StateRead(read_snapshots([HOT]), ("broker-9:8080: timed out",), ("conflict",))


def test_piped_the_note_follows_the_read_and_its_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    got = Chosen(_Source(), "no snapshot given: reading the live cluster at URL").read()
    assert len(got) == 1 and got.last.cluster
    assert err.getvalue().splitlines() == [
        "lbctl: warning: broker-9:8080: timed out", "lbctl: warning: conflict",
        "lbctl: no snapshot given: reading the live cluster at URL"]


def test_on_a_terminal_the_note_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr("lbctl.cli.connection.is_terminal", lambda _s: True)
    Chosen(_Source(), "no snapshot given: reading the live cluster at URL").read()
    assert err.getvalue().splitlines()[0] == (
        "lbctl: no snapshot given: reading the live cluster at URL")


def test_files_are_paths() -> None:
    assert list(FilesOrLive([Path("a.json")]).files) == [Path("a.json")]
    assert list(MonitorSnapshots([Path("b.json")]).files) == [Path("b.json")]
