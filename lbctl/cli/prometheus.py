"""History from Prometheus: `lbctl snapshot from-prometheus`, and the ``--prometheus-url`` options
that `recommend`, `explain`, `simulate`, `compare` and `fleet ingest` share (the sequence is then
built in memory). The work is :mod:`lbctl.sources.prometheus`'s; this module only wires flags.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from msgspec import Struct

if TYPE_CHECKING:
    from lbctl.admin.prometheus import PrometheusClient
    from lbctl.model.cluster import ClusterState
    from lbctl.sources.prometheus import HistoryRequest, Reference, Report

_P = "History from Prometheus"

PrometheusUrl = Annotated[str | None, typer.Option(
    "--prometheus-url", metavar="URL", rich_help_panel=_P,
    help="Read the history from this Prometheus (https://user:pass@… for basic auth) instead of "
         "snapshot files.")]
Since = Annotated[str | None, typer.Option(
    "--since", metavar="DURATION", rich_help_panel=_P,
    help="From this long ago until now, e.g. 2h, 7d (instead of --start/--end).")]
Start = Annotated[str | None, typer.Option(
    "--start", metavar="TIME", rich_help_panel=_P,
    help="First sample: RFC 3339 (2026-03-01T10:00:00Z) or Unix seconds.")]
End = Annotated[str | None, typer.Option(
    "--end", metavar="TIME", rich_help_panel=_P, help="Last sample [default: now].")]
Step = Annotated[str, typer.Option(
    "--step", metavar="DURATION", rich_help_panel=_P,
    help="One snapshot per step (at least the scrape interval).")]
Cluster = Annotated[str | None, typer.Option(
    "--cluster", metavar="NAME", rich_help_panel=_P,
    help="The Pulsar cluster (the metrics' cluster label) when Prometheus holds several.")]
ReferenceOpt = Annotated[str | None, typer.Option(
    "--reference", metavar="SNAPSHOT|live", rich_help_panel=_P,
    help="Bundle boundaries and settings of the cluster: a snapshot file, or 'live' (the admin "
         "API at --admin-url); needed when only per-topic metrics are exported.")]
PrometheusConf = Annotated[Path | None, typer.Option(
    "--prometheus-conf", metavar="FILE", rich_help_panel=_P,
    help="Auth and TLS for Prometheus, with client.conf's keys (authPlugin, authParams, "
         "tlsTrustCertsFilePath, tlsAllowInsecureConnection, tlsCertificateFilePath, …).")]
AllowPartial = Annotated[bool, typer.Option(
    "--allow-partial", rich_help_panel=_P,
    help="Accept answers Prometheus flags as partial (their gaps are marked), instead of failing.")]


class PrometheusArgs(Struct, frozen=True):
    """The ``--prometheus-url`` family of flags, as given."""

    url: str | None = None
    since: str | None = None
    start: str | None = None
    end: str | None = None
    step: str = "1m"
    cluster: str | None = None
    reference: str | None = None
    conf: Path | None = None
    allow_partial: bool = False

    @property
    def given(self) -> bool:
        return self.url is not None

    def check_alone(self, snapshots: object) -> None:
        """Prometheus flags without ``--prometheus-url``, or with snapshot files too: an error."""
        from lbctl.errors import UsageError

        if self.url is None:
            stray = [f for f, v in (("--since", self.since), ("--start", self.start),
                                    ("--end", self.end), ("--reference", self.reference),
                                    ("--prometheus-conf", self.conf)) if v is not None]
            if stray:
                raise UsageError(f"{stray[0]} needs --prometheus-url")
        elif snapshots:
            raise UsageError("give snapshot files or --prometheus-url, not both")


def request_of(ctx: typer.Context | None, args: PrometheusArgs, *, now_ms: int | None = None
               ) -> HistoryRequest:
    """The time range, step, cluster and reference the flags describe."""
    from lbctl.errors import UsageError
    from lbctl.sources.prometheus import HistoryRequest, parse_duration, parse_time

    now = int(time.time() * 1000) if now_ms is None else now_ms
    step = parse_duration(args.step, "--step")
    if args.since is not None:
        if args.start is not None:
            raise UsageError("give --since or --start, not both")
        end = parse_time(args.end, "--end") if args.end else now
        start = end - parse_duration(args.since, "--since")
        start -= start % step  # on the step grid: the same samples run after run
        end -= (end - start) % step
    elif args.start is not None:
        start = parse_time(args.start, "--start")
        end = parse_time(args.end, "--end") if args.end else now
    else:
        raise UsageError("--prometheus-url needs a time range: --since DURATION or --start TIME")
    return HistoryRequest(start, end, step, args.cluster, _reference(ctx, args.reference))


def _reference(ctx: typer.Context | None, ref: str | None) -> Reference | None:
    if ref is None:
        return None
    from lbctl.sources.prometheus import reference_from

    if ref == "live":
        from lbctl.cli.connection import live_states

        return reference_from(live_states(ctx, topics=False), "live")
    from lbctl.sources.snapshot import read_snapshots

    return reference_from(read_snapshots([Path(ref)]), ref)


def open_prometheus(ctx: typer.Context | None, args: PrometheusArgs) -> PrometheusClient:
    from lbctl.admin.clientconf import read_client_conf
    from lbctl.admin.prometheus import DEFAULT_TIMEOUT, PrometheusConfig, client_from_config
    from lbctl.cli.connection import options_of

    assert args.url is not None
    conf = read_client_conf(args.conf) if args.conf else {}

    def flag(key: str) -> bool:
        return conf.get(key, "").strip().lower() == "true"

    opts = options_of(ctx)
    cfg = PrometheusConfig(
        url=args.url, auth_plugin=conf.get("authPlugin") or None,
        auth_params=conf.get("authParams") or None,
        tls_trust_cert_path=conf.get("tlsTrustCertsFilePath") or None,
        tls_allow_insecure=flag("tlsAllowInsecureConnection"),
        tls_enable_hostname_verification=flag("tlsEnableHostnameVerification"),
        tls_cert_file=conf.get("tlsCertificateFilePath") or None,
        tls_key_file=conf.get("tlsKeyFilePath") or None,
        request_timeout=opts.request_timeout or DEFAULT_TIMEOUT)

    def trace(line: str) -> None:
        sys.stderr.write(f"lbctl: debug: {line}\n")

    return client_from_config(cfg, trace=trace if opts.debug else None,
                              allow_partial=args.allow_partial)


def warn_report(report: Report) -> None:
    from lbctl.cli.connection import warn

    for line in report.lines():
        warn(line)


def prometheus_states(ctx: typer.Context | None, args: PrometheusArgs) -> list[ClusterState]:
    """The sequence the flags describe, built in memory; gaps and warnings on stderr."""
    from lbctl.cli.connection import is_terminal, progress_bar
    from lbctl.sources.prometheus import read_history

    req = request_of(ctx, args)
    with open_prometheus(ctx, args) as client:
        states, report = read_history(client, req, progress_bar(is_terminal(sys.stderr)))
    warn_report(report)
    return states


def states_for(ctx: typer.Context | None, snapshots: list[Path] | None, args: PrometheusArgs,
               *, live: bool = True) -> list[ClusterState]:
    """The sequence a command replays: snapshot files, else Prometheus (``--prometheus-url``),
    else (``live``) the cluster as it is now."""
    args.check_alone(snapshots)
    if args.given:
        return prometheus_states(ctx, args)
    if snapshots or live:
        from lbctl.cli.inputs import cluster_states

        return cluster_states(ctx, snapshots)  # none given: the live cluster, announced
    from lbctl.errors import UsageError

    raise UsageError("give snapshot files, or --prometheus-url with --since/--start")


@contextmanager
def history_inputs(ctx: typer.Context | None, paths: list[Path] | None, args: PrometheusArgs,
                   out: Path) -> Iterator[list[Path]]:
    """``fleet ingest``'s inputs: the given paths, or the Prometheus history written to a
    temporary ``.jsonl`` under ``OUT/_prometheus/`` (readable by Spark's executors wherever OUT
    is; Spark skips ``_`` folders) and removed once ingested."""
    import tempfile

    args.check_alone(paths)
    if not args.given:
        if not paths:
            from lbctl.errors import UsageError

            raise UsageError("give snapshot files or directories, or --prometheus-url with "
                             "--since/--start")
        yield paths
        return
    from lbctl.cli.connection import is_terminal, progress_bar
    from lbctl.sources.prometheus import write_history

    req = request_of(ctx, args)
    tmp_dir = out / "_prometheus"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=tmp_dir, prefix="history-", suffix=".jsonl")
    os.close(fd)
    target = Path(name)
    try:
        with open_prometheus(ctx, args) as client:
            report = write_history(client, req, str(target), progress_bar(is_terminal(sys.stderr)))
        warn_report(report)
        yield [target]
    finally:
        target.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            tmp_dir.rmdir()


#: snapshot files, optional for commands that can read history from Prometheus instead
SnapshotsOrPrometheus = Annotated[
    list[Path] | None,
    typer.Argument(help="Snapshot files (.json, .yaml, .jsonl, optionally .gz); several form a "
                   "sequence. Or none, with --prometheus-url.", show_default=False,
                   metavar="[SNAPSHOT]..."),
]


def from_prometheus(
    ctx: typer.Context,
    output_file: Annotated[Path, typer.Option(
        "-f", "--file", metavar="OUT.jsonl",
        help="Write the sequence here (.jsonl, optionally .gz), atomically.")],
    prometheus_url: Annotated[str, typer.Option(
        "--prometheus-url", metavar="URL", show_default=False,
        help="The Prometheus that scrapes the cluster (https://user:pass@… for basic auth).")],
    since: Since = None,
    start: Start = None,
    end: End = None,
    step: Step = "1m",
    cluster: Cluster = None,
    reference: ReferenceOpt = None,
    prometheus_conf: PrometheusConf = None,
    allow_partial: AllowPartial = False,
) -> None:
    """Build a snapshot sequence from Prometheus: one snapshot per step, no export needed.

    Brokers from the pulsar_lb_* usage metrics, bundles from the per-bundle metrics (or the
    per-topic ones summed per bundle with --reference), the extensible load manager's data from
    pulsar_lb_resource_usage, and under "observed" what the leader did until the next step (its
    unload and split counters, and the bundles that changed owner). Every rebuilt field is listed
    under "reconstructed"; a broker or step without samples is left out and listed under "gaps".
    See docs/prometheus.md.

    Examples:

      lbctl snapshot from-prometheus --prometheus-url http://prometheus:9090 --since 2h -f last2h.jsonl

      lbctl snapshot from-prometheus --prometheus-url http://prometheus:9090 --start 2026-03-01T00:00:00Z --end 2026-03-08T00:00:00Z --step 5m --cluster prod -f week.jsonl.gz
    """
    from lbctl.cli.connection import is_terminal, progress_bar
    from lbctl.sources.prometheus import write_history

    args = PrometheusArgs(prometheus_url, since, start, end, step, cluster, reference,
                          prometheus_conf, allow_partial)
    req = request_of(ctx, args)
    with open_prometheus(ctx, args) as client:
        report = write_history(client, req, str(output_file),
                               progress_bar(is_terminal(sys.stderr)))
    warn_report(report)
    sys.stderr.write(f"lbctl: wrote {output_file}: {report.snapshots} snapshot(s) of "
                     f"{report.steps} step(s)\n")
