"""Where a command's cluster state comes from — chosen here, and only here (:func:`choose`).

* snapshot files given → those files (:class:`~lbctl.sources.files.SnapshotFiles`);
* ``--prometheus-url`` → that Prometheus' range (:class:`~lbctl.sources.prometheus.source.PrometheusRange`);
* neither → the live cluster at ``--admin-url`` (:class:`~lbctl.sources.cluster.LiveCluster`). A
  command that could have been given files says so on stderr (a forgotten argument must not
  silently become a network read): on a terminal before the read, so that a slow read is
  explained while it runs; when stderr is a file or a pipe once the read succeeded, so that a
  failed read stays one line (``lbctl: error: GET <url>…``, which names the cluster itself).
  Commands that only act on a live cluster (apply, drain, monitor-brokers, ``--watch``) take it
  without a word; simulate and compare refuse (they need a history).

What a command takes is declared by one option group (:mod:`lbctl.cli.groups`) below: the
snapshot arguments and, for the commands that replay a history, the Prometheus flags.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

import typer
from msgspec import Struct

from lbctl.cli.connection import OptionalSnapshots
from lbctl.cli.groups import OptionGroup
from lbctl.cli.prometheus import PrometheusArgs, SnapshotsOrPrometheus

if TYPE_CHECKING:
    from lbctl.admin.client import AdminClient
    from lbctl.sources.base import Progress, StateRead, StateSource
    from lbctl.sources.live import LiveSource


class StateArgs(OptionGroup, frozen=True):
    """What a command was given to read its state from (the base of the groups below)."""

    #: without files or Prometheus: the live cluster (``None``), or this usage error
    missing: ClassVar[str | None] = None
    #: whether going live for lack of files is said on stderr
    announce: ClassVar[bool] = True

    @property
    def files(self) -> Sequence[Path]:
        return ()

    @property
    def history(self) -> PrometheusArgs:
        return PrometheusArgs()


class FilesOrLive(StateArgs, frozen=True):
    """``[SNAPSHOT]...``: snapshot files, else the live cluster (doctor, propose)."""

    snapshots: OptionalSnapshots = None

    @property
    def files(self) -> Sequence[Path]:
        return self.snapshots or ()


class StateInput(FilesOrLive, frozen=True):
    """``[SNAPSHOT]...`` and the Prometheus flags: files, a Prometheus range, else the live
    cluster (recommend, explain)."""

    prometheus: PrometheusArgs = PrometheusArgs()

    @property
    def history(self) -> PrometheusArgs:
        return self.prometheus


class HistoryInput(StateArgs, frozen=True):
    """``[SNAPSHOT]...`` or the Prometheus flags, one of them (simulate, compare)."""

    #: the live cluster is one moment, not a start to replay: say how to make it a file
    missing: ClassVar[str | None] = (
        "give snapshot files, or --prometheus-url with --since/--start (the live cluster as "
        "a file: lbctl snapshot export -f snap.json)")

    snapshots: SnapshotsOrPrometheus = None
    prometheus: PrometheusArgs = PrometheusArgs()

    @property
    def files(self) -> Sequence[Path]:
        return self.snapshots or ()

    @property
    def history(self) -> PrometheusArgs:
        return self.prometheus


class FleetInput(StateArgs, frozen=True):
    """``fleet ingest``'s ``PATH...`` (files or directories, which Spark reads) or the Prometheus
    flags."""

    missing: ClassVar[str | None] = ("give snapshot files or directories, or --prometheus-url "
                                     "with --since/--start")

    paths: Annotated[list[Path] | None, typer.Argument(
        metavar="PATH", show_default=False,
        help="Snapshot files or directories (searched recursively), any clusters mixed; or "
             "none, with --prometheus-url.")] = None
    prometheus: PrometheusArgs = PrometheusArgs()

    @property
    def files(self) -> Sequence[Path]:
        return self.paths or ()

    @property
    def history(self) -> PrometheusArgs:
        return self.prometheus


class MonitorSnapshots(StateArgs, frozen=True):
    """``monitor-brokers --snapshot FILE``: files replayed as refreshes, else the live cluster."""

    announce: ClassVar[bool] = False

    snapshot: Annotated[list[Path] | None, typer.Option(
        "--snapshot", metavar="FILE", help="Show snapshot files instead of the live cluster "
        "(a sequence is replayed as refreshes).")] = None

    @property
    def files(self) -> Sequence[Path]:
        return self.snapshot or ()


class Chosen(Struct, frozen=True):
    """The source :func:`choose` picked, and the note that says so when it was picked for lack
    of input."""

    source: StateSource
    note: str | None = None

    def read(self) -> StateRead:
        """Read once: ``reading …`` with the read's progress on a terminal; the read's failures
        and warnings on stderr; the note (:meth:`announced`)."""
        from lbctl.cli import connection
        from lbctl.progress import shown

        with self.announced():
            with shown() as bar, bar.phase(f"reading {self.source.what}"):
                got = self.source.read(bar.step)
            for line in got.report:
                connection.warn(line)
        return got

    @contextmanager
    def announced(self) -> Iterator[None]:
        """The note, if any, around a read: before it on a terminal (a slow read is explained
        while it runs), after it otherwise (a failed read stays one error line)."""
        from lbctl.cli import connection

        terminal = connection.is_terminal(sys.stderr)
        if self.note and terminal:
            _say(self.note)
        try:
            yield
        except Exception as e:
            if not self.note:
                raise
            from lbctl.admin.errors import ConnectionFailed  # not imported by a file's read

            if not isinstance(e, ConnectionFailed) or e.sent:
                raise
            # no snapshot named and nothing listening: a newcomer's first `lbctl recommend`
            raise ConnectionFailed(f"{e}; with no snapshot given lbctl reads the live cluster: "
                                   "give a snapshot file, or --admin-url (or start lbctl "
                                   "sandbox)", sent=False) from None
        if self.note and not terminal:
            _say(self.note)

    @contextmanager
    def session(self, progress: Progress | None = None) -> Iterator[LiveSource]:
        """The live cluster's reader on an open client (the source must be the live cluster)."""
        from lbctl.sources.cluster import LiveCluster

        assert isinstance(self.source, LiveCluster)
        with self.source.session(progress) as reader:
            yield reader


def _say(note: str) -> None:
    sys.stderr.write(f"lbctl: {note}\n")
    sys.stderr.flush()


def keeping_client(chosen: Chosen, into: list[AdminClient]) -> Chosen:
    """``chosen`` whose live read also keeps the client it opens in ``into`` (a file or
    Prometheus source is returned as it is): once the read has closed it, the client's
    :meth:`~lbctl.admin.client.AdminClient.cluster_speed` still says how fast the cluster's clock
    ran (a loopback sandbox's ``--speed``; 1 on a real cluster), for a grace check against the
    journal (:func:`lbctl.apply.runner.unloads_in_grace`)."""
    from lbctl.records import replace
    from lbctl.sources.cluster import LiveCluster

    source = chosen.source
    if not isinstance(source, LiveCluster):
        return chosen
    connect = source.connect

    @contextmanager
    def opened() -> Iterator[AdminClient]:
        with connect() as client:
            into.append(client)
            yield client

    return replace(chosen, source=replace(source, connect=opened))


def choose(ctx: typer.Context | None, given: StateArgs | None = None, *, stream: bool = False,
           topics: bool = True, namespaces: bool = True) -> Chosen:
    """The one choice of where state comes from (module docstring). ``given`` is what the command
    line gave (``None``: the command acts on a live cluster, which needs no announcing);
    ``stream``: the reader can replay a large ``.jsonl`` a snapshot at a time; ``topics`` and
    ``namespaces``: what a live read includes."""
    announce = given is not None and given.announce
    given = given or StateArgs()
    files = list(given.files)
    history = given.history
    history.check_alone(files)
    if history.given:
        from lbctl.cli.prometheus import prometheus_source

        return Chosen(prometheus_source(ctx, history))
    if files:
        from lbctl.sources.files import snapshot_files

        return Chosen(snapshot_files(files, stream=stream))
    if given.missing is not None:
        from lbctl.errors import UsageError

        raise UsageError(given.missing)
    from lbctl.cli.connection import live_cluster

    source = live_cluster(ctx, topics=topics, namespaces=namespaces)
    if not announce:
        return Chosen(source)
    return Chosen(source, f"no snapshot given: reading the live cluster at {_admin_url(ctx)}")


def _admin_url(ctx: typer.Context | None) -> str:
    """The admin URL, credentials left out (the note may end up in a shared log)."""
    from lbctl.admin.clientconf import resolve_connection
    from lbctl.cli.connection import options_of
    from lbctl.safe.redact import url_without_userinfo

    return url_without_userinfo(resolve_connection(options_of(ctx)).admin_url)


@contextmanager
def live_session(ctx: typer.Context | None, *, topics: bool = True, namespaces: bool = True,
                 progress: Progress | None = None) -> Iterator[LiveSource]:
    """The live cluster for a command that acts on it (apply, drain, split-bundle): :func:`choose`'s
    source with nothing given, its client open while the block runs (``reader.client``)."""
    with choose(ctx, topics=topics, namespaces=namespaces).session(progress) as reader:
        yield reader
