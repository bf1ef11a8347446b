"""`lbctl fleet …`: fleet-wide offline analysis on Apache Spark (ingest, report, whatif).

Spark (pyspark) is imported only when one of these commands runs; ``--master`` and ``--conf``
pass through to the session (:mod:`lbctl.fleet.session`).

This file is also the application file for ``spark-submit`` (and ``python -m lbctl.cli.fleet``)::

    spark-submit --master yarn "$(python -c 'import lbctl.cli.fleet as m; print(m.__file__)')" \\
        report /shared/fleet
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lbctl.cli.common import LoadManagerChoice, Shown
from lbctl.cli.groups import Fields, OptionGroup, grouped
from lbctl.cli.root import HandlingGroup
from lbctl.cli.state import FleetInput
from lbctl.errors import Interrupted, LbctlError, Terminated

if TYPE_CHECKING:
    from lbctl.fleet.report import ReportOptions

app = typer.Typer(help="Fleet-wide offline analysis of snapshot histories on Apache Spark.",
                  no_args_is_help=True, cls=HandlingGroup)  # its own program under spark-submit

Master = Annotated[
    str | None,
    typer.Option("--master", metavar="URL",
                 help="Spark master (local[*], spark://host:7077, yarn, k8s://…); default local[*], "
                      "or spark-submit's when run under spark-submit."),
]
Conf = Annotated[
    list[str] | None,
    typer.Option("--conf", metavar="KEY=VALUE",
                 help="A Spark setting (repeatable), e.g. --conf spark.driver.memory=4g."),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines on stderr.")]


class SparkArgs(OptionGroup, frozen=True):
    """``--master --conf --quiet``: where Spark runs and how much it says."""

    master: Master = None
    conf: Conf = None
    quiet: Quiet = False


DataDir = Annotated[
    Path, typer.Argument(metavar="DIR", help="The output directory of `lbctl fleet ingest`.",
                         show_default=False),
]


@app.callback()
def fleet(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option(
        "--debug", help="Print the Spark settings in use (and where each comes from) on stderr.")
    ] = False,
) -> None:
    """Fleet-wide offline analysis of snapshot histories on Apache Spark."""
    ctx.meta["lbctl.fleet.debug"] = debug


def _debug(ctx: typer.Context | None) -> bool:
    """``lbctl --debug fleet …`` or ``lbctl fleet --debug …`` (the latter under spark-submit)."""
    from lbctl.cli.connection import options_of

    return bool(ctx is not None and (ctx.meta.get("lbctl.fleet.debug") or options_of(ctx).debug))


def _require_extras() -> None:
    """pyspark, pandas, pyarrow and Java, each missing one a one-line hint (not under
    spark-submit, where Spark is already up)."""
    from lbctl.fleet import _compat

    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        _compat.require_fleet()


@contextmanager
def _spark(spark: SparkArgs, debug: bool = False) -> Iterator[tuple[Callable[..., Any], Any]]:
    """A lazily started Spark session (stopped on exit) and the progress printer."""
    from lbctl.fleet.progress import Progress
    from lbctl.fleet.session import active_session, parse_conf, spark_session

    _require_extras()
    master = spark.master
    settings = parse_conf(spark.conf or [])
    progress = Progress(enabled=not spark.quiet)
    held: list[Any] = []
    # asked here, in the calling thread: the active session is per thread, and the session may
    # be started from another (lbctl.fleet.session.start_while)
    owned = active_session(if_imported=True) is None  # a session the caller made is the caller's

    def session(input_bytes: int | None = None) -> Any:
        if not held:
            from lbctl.fleet.session import effective_conf

            if debug:
                for key, value, origin in effective_conf(master, settings, input_bytes):
                    sys.stderr.write(f"lbctl: debug: spark {key}={value} ({origin})\n")
                if not owned:
                    sys.stderr.write("lbctl: debug: reusing the Spark session already running "
                                     "in this process (its settings stay)\n")
            with progress.phase(f"starting Spark ({master or 'local[*]'})"):
                held.append(spark_session(master, settings, input_bytes=input_bytes))
            held.append(owned)
            progress.spark = held[0]
            noted.install()  # over the handler a SparkContext started here installed
            if debug:
                sc = held[0].sparkContext
                sys.stderr.write(f"lbctl: debug: spark master {sc.master}, Spark "
                                 f"{held[0].version}, default parallelism "
                                 f"{sc.defaultParallelism}\n")
        return held[0]

    noted = _InterruptNoted(held)
    noted.install()
    try:
        yield session, progress
    except Exception as e:
        if noted.terminated:  # the same for SIGTERM (lbctl.cli.root): exit 130, one line
            raise Terminated from e
        if noted.seen:  # Py4J swallows a Ctrl-C during a call; the call then fails
            raise Interrupted("interrupted") from e
        raise
    finally:
        noted.uninstall()
        if held and held[1]:
            held[0].stop()  # its jobs with it
        elif held and (noted.seen or noted.terminated):  # a session the caller keeps: the
            with contextlib.suppress(Exception):  # interrupted command's jobs end here
                held[0].sparkContext.cancelAllJobs()


class _InterruptNoted:
    """Ctrl-C during the Spark work: noted, and ``KeyboardInterrupt`` raised. Py4J catches a ``KeyboardInterrupt`` that comes during a
    call to the JVM and the call then fails ("Answer from Java side is empty"), which lbctl
    reported as a failed Spark job, exit 1, under Py4J's traceback; noted, it is exit 130 and
    "interrupted". Installed again each time a session starts (a SparkContext started in the
    main thread installs its own handler)."""

    def __init__(self, held: list[Any]) -> None:
        self.held = held
        self.seen = False
        self.terminated = False
        self.previous: Any = None
        self.previous_term: Any = None

    def handle(self, signum: int, frame: Any) -> None:
        self.seen = True  # jobs are cancelled when the session stops: a call to the JVM from
        raise KeyboardInterrupt  # here, during another, is a reentrant read of Py4J's socket

    def handle_term(self, signum: int, frame: Any) -> None:
        """SIGTERM, where lbctl's root made it raise (:mod:`lbctl.cli.root`): noted too, since
        Py4J turns it into a failed call just as it does Ctrl-C (hostile18)."""
        self.terminated = True
        raise Terminated

    def install(self) -> None:
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return  # only the main thread may set a handler (and receives the signal)
        if self.previous is None:
            self.previous = signal.getsignal(signal.SIGINT)
            term = signal.getsignal(signal.SIGTERM)
            # only over a handler that raises already (the root's): SIGTERM's default action
            # (spark-submit, a caller's own choice) is left alone
            self.previous_term = term if callable(term) and term != self.handle_term else None
        if self.previous_term is not None:
            signal.signal(signal.SIGTERM, self.handle_term)
        if self.previous is signal.SIG_IGN:  # run in the background by a shell: leave it so
            return
        signal.signal(signal.SIGINT, self.handle)

    def uninstall(self) -> None:
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        if self.previous_term is not None:
            signal.signal(signal.SIGTERM, self.previous_term)


_TMP_DIR = "_prometheus"


@contextmanager
def history_inputs(ctx: typer.Context | None, given: FleetInput, out: Path) -> Iterator[list[Path]]:
    """``fleet ingest``'s inputs: the given paths, or the Prometheus history written to a
    temporary ``.jsonl`` under ``OUT/_prometheus/`` (readable by Spark's executors wherever OUT
    is; Spark skips ``_`` folders) and removed once ingested."""
    from lbctl.cli.prometheus import warn_report
    from lbctl.cli.state import choose
    from lbctl.progress import shown
    from lbctl.safe.files import open_dir, open_private
    from lbctl.sources.prometheus.source import PrometheusRange

    source = choose(ctx, given).source
    if not isinstance(source, PrometheusRange):
        yield list(given.paths or ())
        return
    # made and removed relative to descriptors of OUT and OUT/_prometheus (lbctl.safe.files), so
    # a directory swapped for a link meanwhile cannot have a file made or removed elsewhere
    with open_dir(out, error=LbctlError, make=0o777) as held_out:
        try:
            with open_dir(_TMP_DIR, error=LbctlError, make=0o777, at=held_out) as held:
                name = f"history-{os.urandom(8).hex()}.jsonl"  # O_EXCL: never one already there
                fd, _ = open_private(name, error=LbctlError, new=True, at=held)
                os.close(fd)
                target = Path(held.join(name))
                try:
                    with shown() as bar:
                        report = source.write(str(target), bar.step)
                    warn_report(report)
                    yield [target]
                finally:
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=held.fd)
        finally:
            with contextlib.suppress(OSError):
                os.rmdir(_TMP_DIR, dir_fd=held_out.fd)


def _plots_skipped_said(no_plot: bool) -> str | None:
    """Why the report will draw no plot (None: it will), said before Spark starts, not after
    its work; a missing fleet extra is the one line, before the plots' warning."""
    from lbctl.cli.connection import warn
    from lbctl.fleet.report import plots_skipped

    _require_extras()
    skipped = plots_skipped(no_plot)
    if skipped is not None and not no_plot:
        warn(f"the report's plots will be skipped ({skipped}; --no-plot: tables only)")
    return skipped


def _report(session: Callable[..., Any], progress: Any, data: Path, out: Path | None,
            opts: ReportOptions, skipped: str | None, shown: Shown) -> None:
    """The report on ``data``'s tables in ``session`` (started here if it is not up yet, while
    Python imports what the report needs), written and printed."""
    from lbctl.fleet.commit import locked
    from lbctl.fleet.files import tree_size
    from lbctl.fleet.report import compute, import_libraries, require_tables, write_files
    from lbctl.fleet.session import spark_jobs, start_while
    from lbctl.render.fleet_view import ReportView

    require_tables(data, "snapshots", "brokers", "bundles")
    with locked(data, write=False):
        spark_up, _ = start_while(lambda: session(tree_size(data)),
                                  lambda: import_libraries(plots=skipped is None))
        with spark_jobs(spark_up):
            result = compute(spark_up, data, opts, progress)
        result.plots_skipped = skipped
        with progress.phase(f"writing the report to {out or data / 'report'}"):
            write_files(result, out or data / "report")
    shown.emit(ReportView(result))


@app.command("ingest")
@grouped
def ingest(
    ctx: typer.Context,
    *,
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Where the Parquet tables go.")],
    then_report: Annotated[bool, typer.Option(
        "--report", help="Then report on the tables in the same Spark session (one JVM start, "
                         "not two): as `lbctl fleet report DIR`, written to DIR/report and "
                         "printed; the ingest's summary goes to stderr.")] = False,
    spark: SparkArgs,
    shown: Shown,
    given: FleetInput,
) -> None:
    """Read snapshot files with Spark into Parquet tables partitioned by cluster and date.

    Tables: snapshots, brokers (one row per broker per snapshot), bundles (one row per bundle per
    snapshot) and topics. Re-running adds only what is new; a malformed file is reported and
    skipped, and so is a bad line of a .jsonl (its good lines are ingested); the run then ends
    with one line counting them and exit code 1. With --report, the report follows in the same Spark session.

    \b
    Examples:
      lbctl fleet ingest examples/fleet/ --out /tmp/fleet
      lbctl fleet ingest examples/fleet/ --out /tmp/fleet --report
      lbctl fleet ingest /data/snapshots --out /data/fleet --master 'local[8]' \\
          --conf spark.driver.memory=4g
    """
    from lbctl.errors import UsageError
    from lbctl.fleet.ingest import ingest as run
    from lbctl.render.fleet_view import IngestView
    from lbctl.safe.files import refuse_link

    refuse_link(out, error=UsageError)  # the tables, the manifest and the lock are written in it
    if out.exists() and not out.is_dir():  # (a FIFO there was "File exists")
        raise UsageError(f"{out}: not a directory (--out is where the tables are written)")

    skipped = _plots_skipped_said(no_plot=False) if then_report else None
    with history_inputs(ctx, given, out) as inputs, _spark(spark, _debug(ctx)) as (
            session, progress):
        sized = session
        if then_report:  # one session for both: sized for the larger of the input and the store
            from lbctl.fleet.files import tree_size

            def sized(input_bytes: int | None = None) -> Any:
                return session(max(input_bytes or 0, tree_size(out)))
        result = run(inputs, out, session=sized, progress=progress)
        if not then_report:
            shown.emit(IngestView(result))
        else:
            from lbctl.render import render

            render(IngestView(result), "table", sys.stderr)  # stdout holds the report alone
            sys.stderr.flush()
            from lbctl.fleet.report import ReportOptions

            _report(session, progress, out, None, ReportOptions(), skipped, shown)
    lost = skipped_input(result.skipped)
    if lost is not None:
        raise lost


def skipped_input(entries: list[dict[str, Any]]) -> LbctlError | None:
    """The error an ingest ends with when it skipped anything (None: it read everything): a
    script must not take a run that left records out for a clean one (exit 1, "bad input file",
    docs/exit-codes.md), though the summary was printed and every good record stored. Entries
    with a ``line`` are bad lines of a ``.jsonl`` whose other lines were read."""
    if not entries:
        return None
    lines = sum("line" in e for e in entries)
    files = len(entries) - lines
    parts = ([f"{files} file(s)"] if files else []) + ([f"{lines} line(s)"] if lines else [])
    return LbctlError(f"skipped {' and '.join(parts)} that could not be read (each is named "
                      "in the summary); everything else was ingested")


@app.command("report")
@grouped
def report(
    ctx: typer.Context,
    *,
    data: DataDir,
    out: Annotated[Path | None, typer.Option(
        "--out", metavar="DIR", help="Where CSV/Parquet tables and PNG plots go [default: DIR/report].")] = None,
    bounce_window: Annotated[int, typer.Option(
        "--bounce-window", metavar="N", help="A move back to an owner of the last N samples is a bounce-back.")] = 10,
    oversized_share: Annotated[float, typer.Option(
        "--oversized-share", metavar="F", help="A bundle carrying more than this share of its broker's throughput is oversized.")] = 0.5,
    top: Annotated[int, typer.Option("--top", metavar="K", help="Hot bundles shown.")] = 10,
    no_plot: Annotated[bool, typer.Option(
        "--no-plot", help="Write the tables only, no PNG plots (no matplotlib needed).")] = False,
    spark: SparkArgs,
    shown: Shown,
) -> None:
    """Imbalance, hot bundles and churn per cluster and over time; tables and PNG plots.

    The plots need matplotlib (pip install 'lbctl[plot]'); without it the report is written and
    printed all the same, and says the plots were skipped.

    Per cluster: spread of broker load (std, cv, max - min, max/min of message rate and
    throughput), overloaded and idle brokers, bundles over the split thresholds, oversized and
    unsplittable bundles, observed moves and bounce-backs, and rankings by imbalance and churn.

    \b
    Examples:
      lbctl fleet report /tmp/fleet
      lbctl fleet report /tmp/fleet --out /tmp/fleet-report -o json
    """
    from lbctl.fleet.report import ReportOptions, require_tables

    opts = ReportOptions(bounce_window, oversized_share, top)

    _require_extras()  # a missing extra is said first, before the data is looked at
    require_tables(data, "snapshots", "brokers", "bundles")  # before Spark's start-up cost
    skipped = _plots_skipped_said(no_plot)
    with _spark(spark, _debug(ctx)) as (session, progress):
        _report(session, progress, data, out, opts, skipped, shown)


@app.command("whatif")
@grouped
def whatif(
    ctx: typer.Context,
    *,
    data: DataDir,
    strategy: Annotated[list[str] | None, typer.Option(
        "--strategy", metavar="NAME",
        help="Shedding strategy to replay (repeatable); default: each snapshot's configured one.")] = None,
    lm: Annotated[LoadManagerChoice, Fields("placement", "set_", "seed")],
    window: Annotated[int, typer.Option(
        "--window", metavar="N", help="'Soon after' means within N samples.")] = 10,
    cluster: Annotated[list[str] | None, typer.Option(
        "--cluster", metavar="NAME", help="Only this cluster (repeatable).")] = None,
    spark: SparkArgs,
    shown: Shown,
) -> None:
    """Replay every cluster's history through strategies; count the unloads each recommends.

    The replay runs lbctl's own strategies and load-manager cycle (as `lbctl recommend
    --all-cycles` does), one Spark group per cluster, cycles in time order with the strategies'
    memory carried. moved_soon_after counts unloads whose bundle the recorded history shows
    moving within N samples; repeats, unloads the same strategy recommends again within N cycles.

    \b
    Examples:
      lbctl fleet whatif /tmp/fleet --strategy ThresholdShedder \\
          --strategy UniformLoadShedder
      lbctl fleet whatif /tmp/fleet --strategy AvgShedder --placement AvgShedder \\
          -o csv
    """
    from lbctl.config import parse_assignments
    from lbctl.fleet.report import require_tables
    from lbctl.fleet.whatif import WhatIfOptions, compute, strategies_arg, validate
    from lbctl.render.fleet_view import WhatIfView

    opts = WhatIfOptions(strategies_arg(strategy), lm.placement,
                         tuple(parse_assignments(lm.set_ or []).items()), lm.seed, window,
                         tuple(cluster or ()))
    validate(opts)
    _require_extras()  # a missing extra is said first, before the data is looked at
    require_tables(data, "snapshots")
    from lbctl.fleet.commit import locked
    from lbctl.fleet.session import spark_jobs

    with locked(data, write=False), _spark(spark, _debug(ctx)) as (session, progress):
        up = session()
        with spark_jobs(up):
            counts = compute(up, data, opts, progress)
    shown.emit(WhatIfView(counts, window))


if __name__ == "__main__":  # spark-submit …/lbctl/cli/fleet.py report DIR
    app(prog_name="lbctl fleet")
