"""walk21: the last of apply's lines to fit the terminal, and one wording for a refused disk.

* ``executor.request_lines`` measures screen columns (``safe.text.display_width``), as
  ``fit_line`` and the tables do: a ``# …`` summary naming ``東京-1`` takes 6 columns, not 4.
* ``request_lines(width=None)`` keeps each request whole, and apply's runner passes its UI's
  width: the watcher's apply (``UI(width=None)``) logs a request as one ``lbctl:`` record.
* apply's and drain's stderr warnings fit the terminal (``cli.connection.warn_fitted``), broken
  at blanks only; the plain ``warn`` stays one line.
* ``fleet report`` says a refused ``--out`` as ``fleet ingest`` does: ``cannot write PATH:
  REASON``, exit 1; and so do ingest's own lock and mkdir.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lbctl.executor import request_lines
from lbctl.safe.text import display_width

_BASE = "http://127.0.0.1:8080"
_WIDE = [
    (f"POST {_BASE}/admin/v2/namespaces/public/default/0x00000000_0x40000000/unload"
     "?destinationBroker=127.0.0.1:8081",
     "#1 unload public/default/0x00000000_0x40000000 from 東京-ブローカー-1:8080 to "
     "大阪-ブローカー-2:8080 (移動)"),
    (f"PUT {_BASE}/admin/v2/namespaces/public/default/0x40000000_0x80000000/split"
     "?unload=false&splitAlgorithmName=range_equally_divide",
     "#2 split public/default/0x40000000_0x80000000 on 東京-ブローカー-1:8080 で分割"),
]


def _fits(lines: list[str], width: int) -> None:
    for x in lines:  # longer than the width only when it is one word
        assert display_width(x) <= width or len(x.split()) == 1, (width, lines)


# --- request_lines: screen columns ----------------------------------------------------------------


@pytest.mark.parametrize("width", [40, 50, 60, 70, 80, 90, 100])
def test_request_lines_measure_screen_columns(width: int) -> None:
    """Counted by characters, a summary naming 東京-ブローカー-1 ran past the terminal by as
    many columns as it had wide characters."""
    lines = request_lines("lbctl would send 2 request(s)", _BASE, _WIDE, width)
    # the summaries' lines (a request's path is one word, so it may be longer than the width)
    notes = [x for x in lines if x.startswith(("      # ", "        "))]
    assert len(notes) >= 2, lines
    _fits(notes, width)
    for x in lines:
        if x not in notes and x.startswith("  "):  # a request's part: one word, or it fits
            assert display_width(x) <= width or len(x.split()) <= 2, lines
    said = " ".join(" ".join(lines).split())
    for _, summary in _WIDE:  # each summary whole, words in order
        assert f"# {summary}" in said, said


def test_request_lines_whole_when_they_fit_on_screen() -> None:
    """Whole when every request with its summary fits the screen: measured by columns, a line
    of 150 characters that takes 165 columns does not fit 160."""
    items = [(r, s) for r, s in _WIDE[:1]]
    line = f"  {items[0][0]}    # {items[0][1]}"
    assert len(line) < display_width(line)
    wide = display_width(line)
    assert request_lines("h", _BASE, items, wide) == ["h:", line]
    assert request_lines("h", _BASE, items, wide - 1) != ["h:", line]
    assert request_lines("h", _BASE, items, len(line)) != ["h:", line]


def test_request_lines_width_none_keeps_each_request_on_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """None: a log's lines, one record each (the watcher's apply); -1, the default: the
    terminal's, $COLUMNS when set."""
    monkeypatch.setenv("COLUMNS", "80")
    whole = request_lines("lbctl will send 2 request(s)", _BASE, _WIDE, None)
    assert whole == ["lbctl will send 2 request(s):",
                     *(f"  {r}    # {s}" for r, s in _WIDE)]
    fitted = request_lines("lbctl will send 2 request(s)", _BASE, _WIDE)
    assert fitted == request_lines("lbctl will send 2 request(s)", _BASE, _WIDE, 80)
    assert len(fitted) > 3
    _fits(fitted, 80)


def test_the_summary_wrap_is_textwrap_s_on_ascii() -> None:
    """The display-width wrap of the ``# …`` line breaks where textwrap (characters) did on
    ASCII text, so nothing that printed before moves."""
    import random
    import textwrap

    from lbctl.executor import _wrap_words

    rnd = random.Random(21)
    for _ in range(2000):
        words = ["".join(rnd.choice("abc/._-:0x") for _ in range(rnd.randint(1, 30)))
                 for _ in range(rnd.randint(1, 12))]
        text, width = "# " + " ".join(words), rnd.randint(40, 90)
        assert _wrap_words(text, width, " " * 6, " " * 8) == textwrap.wrap(
            text, width, initial_indent=" " * 6, subsequent_indent=" " * 8,
            break_long_words=False, break_on_hyphens=False)


# --- the watcher's log: a request is one record -----------------------------------------------


@pytest.fixture(scope="module")
def _sandbox():  # type: ignore[no-untyped-def]
    from lbctl.sandbox import hot_cluster

    c = hot_cluster(3)
    yield c
    c.stop()


def _plan(url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    monkeypatch.setenv("LBCTL_CONTEXTS", str(tmp_path / "contexts.json"))
    r = CliRunner().invoke(app, ["--admin-url", url, "recommend", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    plan = tmp_path / "plan.json"
    plan.write_text(r.stdout, encoding="utf-8")
    return plan


@pytest.mark.live
def test_a_log_s_apply_shows_each_request_on_one_line(
        _sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The healer's apply runs with ``UI(width=None)``; its plan line and rows were whole, but
    its requests were fitted to 80 columns when piped: one request, several ``lbctl:`` records
    in the watcher's log."""
    from lbctl.admin.client import AdminClient
    from lbctl.apply.planfile import read_plan
    from lbctl.apply.runner import UI, ApplyOptions, ApplyRun

    plan = _plan(_sandbox.admin_url, tmp_path, monkeypatch)
    monkeypatch.setenv("COLUMNS", "80")
    for width, whole in ((None, True), (-1, False)):
        shown: list[str] = []
        with AdminClient(_sandbox.admin_url) as client:
            ApplyRun(client, read_plan(str(plan)),
                     ApplyOptions(dry_run=True, journal=tmp_path / "journal.jsonl"),
                     UI(show=shown.append, width=width)).run()
        at = next(i for i, x in enumerate(shown) if x.startswith("lbctl would send"))
        requests = [x for x in shown[at + 1:] if not x.startswith("dry run")]
        one = [x for x in requests if re.match(r"  (POST|PUT|DELETE|GET) http", x)
               and "    # #" in x]
        if whole:
            assert requests and one == requests, shown
            assert all(display_width(x) > 80 for x in requests), requests
        else:
            assert not one and len(requests) > 1, shown
            _fits(requests, 80)


# --- apply's and drain's warnings on stderr ---------------------------------------------------

_LOUD = ("THE BALANCER IS STILL PAUSED: restoring it failed (loadBalancerSheddingEnabled: HTTP "
         "500; loadBalancerAutoBundleSplitEnabled: HTTP 500); the journal "
         "/var/lib/lbctl/state/with/a/long/path/journal.jsonl keeps the values to put back: "
         "lbctl drain --restore --yes")


@pytest.mark.parametrize("columns", [60, 80, 120])
def test_drain_and_apply_warnings_fit_the_terminal(
        columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The drain's "THE BALANCER IS STILL PAUSED …" was one 250-column line on stderr."""
    from lbctl.cli import apply as cli_apply
    from lbctl.cli import drain as cli_drain
    from lbctl.cli.common import TABLE

    monkeypatch.setenv("COLUMNS", str(columns))
    cli_drain._ui(TABLE).warn(_LOUD)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("lbctl: warning: THE BALANCER IS STILL PAUSED")
    assert len(lines) > 1 and all(x.startswith("    ") for x in lines[1:]), lines
    _fits(lines, columns)
    assert " ".join(" ".join(lines).split()) == "lbctl: warning: " + _LOUD
    assert "/var/lib/lbctl/state/with/a/long/path/journal.jsonl" in lines[-1] or any(
        "/var/lib/lbctl/state/with/a/long/path/journal.jsonl" in x for x in lines)
    # apply's runner warns through the same function
    source = Path(cli_apply.__file__).read_text(encoding="utf-8")
    assert "warn=warn_fitted" in source


def test_plain_warn_stays_one_record(monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    from lbctl.cli.connection import warn

    monkeypatch.setenv("COLUMNS", "60")
    warn(_LOUD)
    assert capsys.readouterr().err == f"lbctl: warning: {_LOUD}\n"


def test_an_offline_drain_preview_s_warning_fits(tmp_path: Path) -> None:
    """``lbctl rebalance-after BROKER --snapshot FILE``: "offline preview on FILE: nothing was
    sent; on the cluster: lbctl rebalance-after … -o json > fill.json, then lbctl apply
    fill.json" ran to 150 columns."""
    from typer.testing import CliRunner

    from lbctl.cli.app import app
    from tests.paths import ROOT

    snap = str(ROOT / "lbctl" / "examples" / "hot-broker.json")
    for cmd in ("drain", "rebalance-after"):
        r = CliRunner().invoke(app, [cmd, "broker-2.pulsar.svc:8080", "--snapshot", snap],
                               env={"COLUMNS": "80"})
        assert r.exit_code == 0, r.stderr
        warned = [x for x in r.stderr.splitlines() if x.strip()]
        assert warned and warned[0].startswith("lbctl: warning: offline preview on"), r.stderr
        _fits(warned, 80)
        assert f"lbctl {cmd} broker-2.pulsar.svc:8080" in " ".join(" ".join(warned).split())


# --- fleet: one wording for a refused --out ---------------------------------------------------


def test_fleet_report_and_ingest_say_a_read_only_out_alike(tmp_path: Path) -> None:
    """``fleet report`` said ``OUT: Read-only file system`` (mkdir) and ``FILE: cannot write:
    Read-only file system``; ``fleet ingest`` said ``cannot write OUT: …`` from its job, but
    ``OUT: cannot write: OUT/_lbctl_fleet.lock: cannot open: …`` (exit 2) from its lock. One
    wording now, exit 1."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from lbctl.errors import ExitStatus, LbctlError
    from lbctl.fleet.commit import locked
    from lbctl.fleet.report import FleetReport, ReportOptions, write_files
    from tests.tmpfs import refusing_tmpfs

    empty = pd.DataFrame({"time": pd.Series([], dtype="int64")})
    report = FleetReport(clusters=pd.DataFrame(), samples=empty, hot_bundles=pd.DataFrame(),
                         moves=pd.DataFrame(), options=ReportOptions(), plots_skipped="--no-plot")
    reason = "Read-only file system"
    with refusing_tmpfs(tmp_path / "ro", "read-only") as ro:
        def report_to(o: Path) -> None:
            write_files(report, o)

        def ingest_to(o: Path) -> None:
            with locked(o, write=True):
                pass

        cases: list[tuple[Callable[[Path], None], Path, Path]] = [
            (report_to, ro / "report", ro / "report"),  # its mkdir
            (report_to, ro, ro / "clusters.csv"),  # its first file
            (ingest_to, ro / "new", ro / "new"),  # its mkdir
            (ingest_to, ro, ro)]  # its lock file
        for run, out, named in cases:
            with pytest.raises(LbctlError) as e:
                run(out)
            assert str(e.value) == f"cannot write {named}: {reason}", out
            assert e.value.exit_code == ExitStatus.ERROR


# --- drain --restore: twice in a grace period, and its closing line fitted ---------------------


@pytest.mark.live
def test_drain_restore_twice_within_the_grace_period_and_its_line_fits(
        _sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox session drained with --keep-paused and restored, then did it again: the
    second ``drain --restore`` was refused by the grace-period guard ("the same request … was
    sent 8 min ago"), though the balancer was paused and the restore is read from the live
    configuration. And its "balancer settings restored: …" line ran to 118 columns."""
    from typer.testing import CliRunner

    from lbctl.admin.client import AdminClient
    from lbctl.apply import balancer
    from lbctl.cli.app import app
    from lbctl.executor import Executor
    from lbctl.sources.live_dynamic import read_dynamic_config

    journal = tmp_path / "journal.jsonl"
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(journal))
    monkeypatch.setenv("LBCTL_CONTEXTS", str(tmp_path / "contexts.json"))
    url = _sandbox.admin_url
    for _ in range(2):
        with AdminClient(url) as client:
            previous = balancer.to_pause(Executor(client, journal=journal, show=lambda _x: None))
            balancer.pause(Executor(client, yes=True, journal=journal, show=lambda _x: None),
                           "test-cluster", previous)
            assert read_dynamic_config(client).get("loadBalancerSheddingEnabled") == "false"
        r = CliRunner().invoke(app, ["--admin-url", url, "drain", "--restore", "--yes"],
                               env={"COLUMNS": "80"})
        assert r.exit_code == 0, r.stderr
        assert "grace period" not in r.stderr, r.stderr
        lines = r.stdout.splitlines()
        at = next(i for i, x in enumerate(lines) if x.startswith("balancer settings restored:"))
        _fits(lines[at:], 80)
        assert len(lines[at:]) > 1, lines
        with AdminClient(url) as client:
            assert "loadBalancerSheddingEnabled" not in read_dynamic_config(client)


# --- the walk: what an operator is told -------------------------------------------------------


@pytest.mark.live
def test_a_paused_run_says_how_long_it_waits(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """"paused: B turned overloaded (95.0% >= 85%)" and then nothing for five minutes read as
    a hang; the line now says what it waits for and how long."""
    from tests.apply.apply_helpers import busy_cluster, lbctl, plan_doc, spread_moves, write_plan

    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    c = busy_cluster()
    try:
        ids = list(c.brokers)
        moves: list[tuple[str, str, str | None]] = [(b, ids[0], ids[1])
                                                    for b, _, _ in spread_moves(c, 2)]
        plan = write_plan(tmp_path / "plan.json", plan_doc(c, moves))

        def hot(method: str, path: str, query: dict[str, str]) -> None:
            c.brokers[ids[1]].cpu = (95.0, 100.0)

        c.after_mutation.append(hot)
        r = lbctl(c, "apply", str(plan), "--yes", "--pause-timeout", "1")
    finally:
        c.stop()
    said = " ".join(r.stdout.split())
    assert f"paused: {ids[1]} turned overloaded" in said, r.stdout
    assert "waiting up to 1 s (--pause-timeout) for it to fall below before the next action" \
        in said, r.stdout


def test_drain_takes_the_pause_timeout_its_message_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """A drain stopped with "paused 300 s for overloaded broker(s) … (--pause-timeout)", a flag
    drain did not have."""
    from typer.testing import CliRunner

    from lbctl.cli import drain as cli_drain
    from lbctl.cli.app import app

    seen: dict[str, Any] = {}

    def fake_run(client: Any, dopts: Any, output: Any) -> Any:
        seen["pause"] = dopts.apply.pause_timeout
        raise SystemExit(0)

    monkeypatch.setattr(cli_drain, "_run", fake_run)
    from contextlib import contextmanager

    import lbctl.cli.state as state

    @contextmanager
    def session(ctx: Any) -> Any:
        class _C:
            client = None
        yield _C()

    monkeypatch.setattr(state, "live_session", session)
    r = CliRunner().invoke(app, ["drain", "127.0.0.1:8081", "--pause-timeout", "42", "--yes"])
    assert r.exit_code == 0, r.output
    assert seen == {"pause": 42.0}
    help_text = CliRunner().invoke(app, ["drain", "--help"], env={"COLUMNS": "80"}).stdout
    assert "--pause-timeout" in help_text


def test_a_second_examples_copy_says_the_files_are_there(tmp_path: Path) -> None:
    """``lbctl examples --copy examples`` run again said "copied 0 file(s)" and nothing more."""
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    dest = tmp_path / "examples"
    first = CliRunner().invoke(app, ["examples", "--copy", str(dest)])
    assert first.exit_code == 0, first.stderr
    n = int(re.search(r"copied (\d+) file", first.stderr).group(1))  # type: ignore[union-attr]
    assert "already there" not in first.stderr
    again = CliRunner().invoke(app, ["examples", "--copy", str(dest)])
    assert again.exit_code == 0, again.stderr
    assert f"copied 0 file(s) to {dest}; {n} already there, the same" in again.stderr


@pytest.mark.parametrize(("command", "words"), [
    (["recommend"], "default 0, so a run repeats its picks"),
    (["apply"], "this run (default: no limit)"),
    (["apply"], "source or destination; default: no limit"),
    (["unload"], "loadBalancerSheddingGracePeriodMinutes, 30 min by default"),
    (["propose"], "Move at most N bundles (default: no limit)"),
    (["sandbox"], "so a plan stays valid until you apply it"),
    (["watch"], "(500M, 10G; default: no size limit)"),
    (["monitor-brokers"], "default: weightedMax on the full-screen view, else the cluster's"),
])
def test_help_says_the_defaults_and_the_pulsar_setting(command: list[str], words: str) -> None:
    """What the walk found missing in --help: a default (--seed, the caps), the Pulsar setting a
    flag follows (--force's grace period), and --static's "as before 0.2" a newcomer cannot
    read."""
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    text = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "200"}).stdout
    assert words in " ".join(text.split()), text
    assert "before 0.2" not in text


def test_the_examples_list_says_what_a_sequence_is() -> None:
    """The list's kinds are "snapshot" and "sequence"; the heading read "(what each shows:
    README.md there)" and never said what a sequence is."""
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    r = CliRunner().invoke(app, ["examples"], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.stderr
    head = " ".join(r.stdout.split("\n\n")[0].split())
    assert "its README.md says what each shows" in head, head
    assert "a sequence is snapshots over time, replayed cycle by cycle" in head, head
    assert all(len(x) <= 80 for x in r.stdout.splitlines())
