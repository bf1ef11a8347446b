"""History from Prometheus: `lbctl snapshot from-prometheus`, and the ``--prometheus-url`` options
that `recommend`, `explain`, `simulate`, `compare` and `fleet ingest` share (the sequence is then
built in memory). The work is :mod:`lbctl.sources.prometheus`'s; this module only wires flags.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lbctl.cli.groups import Fields, OptionGroup, grouped

if TYPE_CHECKING:
    from lbctl.admin.prometheus import PrometheusClient
    from lbctl.sources.base import StateSource
    from lbctl.sources.prometheus import HistoryRequest, Report
    from lbctl.sources.prometheus.source import PrometheusRange

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


class PrometheusArgs(OptionGroup, frozen=True):
    """The ``--prometheus-url`` family of flags, as given (an option group: :mod:`lbctl.cli.groups`)."""

    url: PrometheusUrl = None
    since: Since = None
    start: Start = None
    end: End = None
    step: Step = "1m"
    cluster: Cluster = None
    reference: ReferenceOpt = None
    prometheus_conf: PrometheusConf = None
    allow_partial: AllowPartial = False

    @property
    def given(self) -> bool:
        return self.url is not None

    def check_alone(self, snapshots: object) -> None:
        """Prometheus flags without ``--prometheus-url``, or with snapshot files too: an error.
        Every flag of the group counts (``--step`` once it differs from its default): a
        ``--cluster`` or ``--step`` given to a command reading a snapshot was silently ignored,
        whatever its value (hostile14)."""
        from lbctl.errors import UsageError

        if self.url is None:
            stray = [f for f, v in (("--since", self.since), ("--start", self.start),
                                    ("--end", self.end), ("--reference", self.reference),
                                    ("--prometheus-conf", self.prometheus_conf),
                                    ("--step", None if self.step == "1m" else self.step),
                                    ("--cluster", self.cluster),
                                    ("--allow-partial", self.allow_partial or None))
                     if v is not None]
            if stray:
                raise UsageError(f"{stray[0]} needs --prometheus-url")
        elif snapshots:
            raise UsageError("give snapshot files or --prometheus-url, not both")


def request_of(ctx: typer.Context | None, args: PrometheusArgs, *, now_ms: int | None = None
               ) -> HistoryRequest:
    """The time range, step and cluster the flags describe (the reference is read with the range:
    :func:`prometheus_source`)."""
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
    return HistoryRequest(start, end, step, args.cluster, horizon_ms=now)


def prometheus_source(ctx: typer.Context | None, args: PrometheusArgs) -> PrometheusRange:
    """The range the flags describe, as a state source (its reference: a snapshot file, or the
    live cluster's boundaries and settings, read with it). Range mistakes are usage errors now."""
    from lbctl.sources.prometheus.source import PrometheusRange

    request = request_of(ctx, args)
    reference: StateSource | None = None
    if args.reference == "live":
        from lbctl.cli.connection import live_cluster

        reference = live_cluster(ctx, topics=False)
    elif args.reference is not None:
        from lbctl.sources.files import snapshot_files

        reference = snapshot_files([Path(args.reference)])
    return PrometheusRange(lambda: open_prometheus(ctx, args), request, reference,
                           args.reference or "")


def open_prometheus(ctx: typer.Context | None, args: PrometheusArgs) -> PrometheusClient:
    from lbctl.admin.prometheus import DEFAULT_TIMEOUT, PrometheusConfig, client_from_config
    from lbctl.cli.connection import options_of, warn

    assert args.url is not None
    opts = options_of(ctx)
    cfg = PrometheusConfig.read(args.url, args.prometheus_conf,
                                opts.request_timeout or DEFAULT_TIMEOUT)

    def trace(line: str) -> None:
        sys.stderr.write(f"lbctl: debug: {line}\n")

    return client_from_config(cfg, trace=trace if opts.debug else None, warn=warn,
                              allow_partial=args.allow_partial)


def warn_report(report: Report) -> None:
    from lbctl.cli.connection import warn

    for line in report.lines():
        warn(line)


#: snapshot files, optional for commands that can read history from Prometheus instead
SnapshotsOrPrometheus = Annotated[
    list[Path] | None,
    typer.Argument(help="Snapshot files (.json, .yaml, .jsonl, optionally .gz); several form a "
                   "sequence. Or none, with --prometheus-url.", show_default=False,
                   metavar="[SNAPSHOT]..."),
]


@grouped
def from_prometheus(
    ctx: typer.Context,
    output_file: Annotated[Path, typer.Option(
        "-f", "--file", metavar="OUT.jsonl",
        help="Write the sequence here (.jsonl, optionally .gz), atomically.")],
    prometheus_url: Annotated[str, typer.Option(
        "--prometheus-url", metavar="URL", show_default=False,
        help="The Prometheus that scrapes the cluster (https://user:pass@… for basic auth).")],
    history: Annotated[PrometheusArgs, Fields("since", "start", "end", "step", "cluster",
                                              "reference", "prometheus_conf", "allow_partial")],
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
    from lbctl.progress import shown
    from lbctl.records import replace

    source = prometheus_source(ctx, replace(history, url=prometheus_url))
    with shown() as bar:
        report = source.write(str(output_file), bar.step)
    warn_report(report)
    from lbctl.safe.text import one_line

    # the name as given may hold an escape sequence: shown escaped (hostile14)
    sys.stderr.write(one_line(f"lbctl: wrote {output_file}: {report.snapshots} snapshot(s) of "
                              f"{report.steps} step(s)") + "\n")
