"""walk17's stumbles, each pinned: three newcomers (an operator, an SRE, a capacity planner)
followed README and docs/ alone, on the examples and on `lbctl sandbox`; what they tripped on is
checked here so that it stays fixed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import hot_cluster

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))
    monkeypatch.setenv("LBCTL_CONTEXTS", str(tmp_path / "contexts.json"))


def test_the_readme_counts_the_doctor_rules_there_are() -> None:
    """README said "20 rules" while doctor ran 21 (its own heading says so on every run)."""
    import lbctl.doctor.builtin  # noqa: F401  (the built-in rules register themselves)
    from lbctl.doctor.base import RULES

    said = re.findall(r"(\d+) rules\b", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert said and {int(n) for n in said} == {len(RULES)}


def test_simulate_with_no_snapshot_says_how_to_get_one() -> None:
    """Every other command reads the live cluster when given no snapshot; simulate and compare
    need a start to replay, and a newcomer on the sandbox was left at "give snapshot files"."""
    for args in (["simulate", "--cycles", "3"],
                 ["compare", "--strategy", "ThresholdShedder", "--strategy", "AvgShedder"]):
        r = CliRunner().invoke(app, args)
        assert r.exit_code == 2
        assert r.stdout == ""
        assert r.stderr.count("\n") == 1
        assert "lbctl snapshot export -f snap.json" in r.stderr, r.stderr


@pytest.mark.live
def test_the_watch_banner_is_not_a_warning(tmp_path: Path) -> None:
    """Where the status page is, said at every start, was printed as "lbctl: warning:": an SRE
    grepping the service's log for warnings found one on every healthy start."""
    c = hot_cluster(3)
    try:
        r = CliRunner().invoke(app, [
            "--admin-url", c.admin_url, "watch", "--history", str(tmp_path / "h"), "--count",
            "1", "--interval", "1", "--listen", "127.0.0.1:0", "--no-doctor"])
    finally:
        c.stop()
    assert r.exit_code == 0, r.stderr
    banner = [x for x in r.stderr.splitlines() if "status page http://127.0.0.1:" in x]
    assert len(banner) == 1 and banner[0].startswith("lbctl: watching "), r.stderr
    assert "warning" not in banner[0]


def test_propose_explain_names_brokers_as_its_tables() -> None:
    """propose --explain's tables said "(common suffix .pulsar.svc:8080 left out …)", then its
    account of each move wrote every name whole, and each line wrapped in two at 80 columns."""
    from tests.paths import EXAMPLES

    args = ["propose", str(EXAMPLES / "hot-broker.json"), "--solver", "greedy", "--explain"]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.stderr
    moves = r.stdout.split("\nMoves:\n", 1)[1]
    assert "broker-2 -> broker-" in moves and ".pulsar.svc:8080" not in moves
    r = CliRunner().invoke(app, [*args, "--wide"], env={"COLUMNS": "80"})
    assert "broker-2.pulsar.svc:8080 -> " in r.stdout.split("\nMoves:\n", 1)[1]


@pytest.mark.live
def test_the_sandbox_page_walks_an_sre_to_an_approved_healing(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:
    """sandbox.md's "Watching it" block, on the static sandbox it starts: the watcher queues a
    plan, `plans list` shows it pending, and approving it moves the bundle. On the living
    sandbox with the default grace, the newcomer's plan never came or was withdrawn first."""
    from tests.test_docs import _lines, _pieces

    text = (ROOT / "docs" / "commands" / "sandbox.md").read_text(encoding="utf-8")
    block = text.split("## Watching it", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [p[1:] for line in _lines(block) for p in _pieces(line)]
    assert lines[0][:2] == ["sandbox", "--static"]
    monkeypatch.chdir(tmp_path)
    c = hot_cluster(3)
    c.set_reassignment(delay=0.05)
    try:
        before = dict(c.owners)
        outs = []
        for args in lines[1:]:
            r = CliRunner().invoke(app, ["--admin-url", c.admin_url, *args],
                                   env={"COLUMNS": "80"})
            assert r.exit_code == 0, f"{args}\n{r.stderr}"
            outs.append(r)
        queued = re.search(r"plans approve (p-\S+)", outs[0].stderr)
        assert queued, outs[0].stderr
        assert queued.group(1) in outs[-1].stdout and "pending" in outs[-1].stdout
        r = CliRunner().invoke(app, ["--admin-url", c.admin_url, "plans", "approve",
                                     queued.group(1), "--history", "watch-history"])
        assert r.exit_code == 0, r.stderr
        assert c.owners != before
    finally:
        c.stop()


@pytest.mark.live
def test_plans_show_fits_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`plans show ID`'s record line (id, status, source, anomaly, capture time) ran to 140
    characters above a table fitted to 80 columns."""
    monkeypatch.chdir(tmp_path)
    c = hot_cluster(3)
    try:
        r = CliRunner().invoke(app, [
            "--admin-url", c.admin_url, "watch", "--history", "wh", "--count", "1",
            "--grace", "out-of-band=0s", "--heal", "out-of-band=approve", "--listen", "",
            "--no-doctor"])
        assert r.exit_code == 0, r.stderr
    finally:
        c.stop()
    queued = re.search(r"plans approve (p-\S+)", r.stderr)
    assert queued, r.stderr
    r = CliRunner().invoke(app, ["plans", "show", queued.group(1), "--history", "wh"],
                           env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.stderr
    assert max(len(x) for x in r.stdout.splitlines()) <= 80, r.stdout
    assert queued.group(1) in r.stdout.splitlines()[0]  # the id whole, first
    assert "out-of-band:" in r.stdout  # the anomaly's id whole too


@pytest.mark.live
def test_apply_held_back_by_a_cap_says_what_to_run_next(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`complete: 3 deferred, 2 done` ended the run with no next step; the line now names the
    command, and that command sends the rest."""
    from lbctl.sandbox.scenarios import SCENARIOS

    monkeypatch.chdir(tmp_path)
    c = SCENARIOS["hot-broker"].start(3, 0, alive=True)
    try:
        url = ["--admin-url", c.admin_url]
        r = CliRunner().invoke(app, [*url, "recommend", "-o", "json"])
        assert r.exit_code == 0, r.stderr
        (tmp_path / "plan.json").write_text(r.stdout)
        r = CliRunner().invoke(app, [*url, "apply", "plan.json", "--yes", "--max-moves", "2",
                                     "--interval", "0"], env={"COLUMNS": "80"})
        assert r.exit_code == 0, r.stderr
        n = r.stdout.split("complete: ", 1)[1].split(" deferred", 1)[0]
        assert int(n) >= 1
        nxt = re.search(r"^next: (\d+) action\(s\) held back by the caps; (lbctl apply plan\.json) "
                        r"again", r.stdout, re.M)
        assert nxt and nxt.group(1) == n, r.stdout
        again = nxt.group(2).split()[1:]
        r = CliRunner().invoke(app, [*url, *again, "--yes", "--interval", "0"])
        assert r.exit_code == 0, r.stderr
        assert f"{n} done" in r.stdout and "deferred" not in r.stdout.splitlines()[-3]
        assert "next:" not in r.stdout
    finally:
        c.stop()


@pytest.mark.parametrize("args", [["list"], ["list", "--all"], ["show", "p-x"],
                                  ["approve", "p-x"], ["reject", "p-x"]])
def test_plans_of_a_history_that_is_not_there_say_so(tmp_path: Path, args: list[str]) -> None:
    """`plans list --history` with a typo said "no plan waiting", as a watcher with nothing to
    heal does; now it says what `watch --status` says of the same directory."""
    missing = tmp_path / "watch-histroy"
    r = CliRunner().invoke(app, ["plans", *args, "--history", str(missing)])
    assert r.exit_code == 2
    assert r.stdout == ""
    assert r.stderr == (f"lbctl: error: {missing}: no watcher history here; give --history "
                        "the DIR the watcher was started with (lbctl watch --history DIR)\n")
    assert not missing.exists()  # nothing created by looking


def test_apply_of_a_snapshot_says_how_to_make_a_plan_of_it(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """`lbctl apply examples/hot-broker.json` stopped at "format is 'lbctl/snapshot@1',
    expected 'lbctl/plan@1'"; the line now names the command that writes a plan, and that
    command's plan is one apply takes."""
    import shlex
    import shutil

    from tests.paths import EXAMPLES

    monkeypatch.chdir(tmp_path)
    shutil.copyfile(EXAMPLES / "hot-broker.json", tmp_path / "hot broker.json")
    r = CliRunner().invoke(app, ["apply", "hot broker.json", "--dry-run"])
    assert r.exit_code == 1 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    cmd = re.search(r"\(a snapshot: lbctl (recommend .*?) > plan\.json", r.stderr)
    assert cmd, r.stderr
    made = CliRunner().invoke(app, shlex.split(cmd.group(1)))
    assert made.exit_code == 0, made.stderr
    (tmp_path / "plan.json").write_text(made.stdout)
    r = CliRunner().invoke(app, ["apply", "plan.json", "--dry-run", "--force-stale"])
    assert "format is" not in r.stderr  # a plan now: what stops it is the cluster, not the file
    # another wrong format gets no such hint
    (tmp_path / "other.json").write_text('{"format": "lbctl/plan@2"}')
    r = CliRunner().invoke(app, ["apply", "other.json", "--dry-run"])
    assert "expected 'lbctl/plan@1'\n" in r.stderr and "recommend" not in r.stderr


@pytest.mark.parametrize(("given", "hint"), [("mix", "(did you mean mixed?)\n"),
                                             ("inferd", "(did you mean inferred?)\n"),
                                             ("nothing", "no such hosts file\n")])
def test_hosts_that_is_neither_a_mix_nor_a_file(given: str, hint: str) -> None:
    """`simulate --hosts mix` said "mix: no such file": neither the mixes nor a file."""
    from tests.paths import EXAMPLES

    r = CliRunner().invoke(app, ["simulate", str(EXAMPLES / "hot-broker.json"), "--hosts",
                                 given, "--cycles", "1"])
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith(f"lbctl: error: --hosts '{given}': not a mix (inferred, mixed)")
    assert r.stderr.endswith(hint), r.stderr


def test_a_word_longer_than_the_line_stays_in_its_paragraph() -> None:
    """doctor's `found:` of shedder-placement-mismatch printed its setting=Class words (92 and
    104 characters) at column 0, outside the finding they belong to; they keep the paragraph's
    indent now (and are still never cut)."""
    from tests.paths import EXAMPLES

    r = CliRunner().invoke(app, ["doctor", str(EXAMPLES / "hot-broker.json"), "--rule",
                                 "shedder-placement-mismatch"], env={"COLUMNS": "80"})
    assert r.exit_code == 1, r.stderr
    finding = r.stdout.split("WARNING shedder-placement-mismatch\n", 1)[1].split("\n\n", 1)[0]
    assert all(line.startswith("  ") for line in finding.splitlines()), finding
    assert ("           loadBalancerLoadPlacementStrategy=org.apache.pulsar.broker.loadbalance."
            "impl.LeastLongTermMessageRate\n") in finding


def test_a_taken_status_port_says_what_to_do(tmp_path: Path) -> None:
    """A second watcher (its own --history) on the default 127.0.0.1:9470 stopped at
    "Address already in use"; the line names --listen's way out."""
    import socket

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        r = CliRunner().invoke(app, ["--admin-url", "http://127.0.0.1:1", "watch", "--history",
                                     str(tmp_path / "h"), "--count", "1",
                                     "--listen", f"127.0.0.1:{port}"])
    finally:
        taken.close()
    assert r.exit_code == 2 and r.stdout == "" and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"lbctl: error: --listen 127.0.0.1:{port}: ")
    assert "give this one --listen HOST:PORT, or --listen '' for no status page" in r.stderr


@pytest.mark.live
def test_brokers_takes_pulsar_admins_words() -> None:
    """A pulsar-admin user types `lbctl brokers list` and `lbctl brokers leader-broker` out of
    habit; both got "Got unexpected extra argument(s)". They mean what they mean there now, and
    any other word names lbctl's spelling."""
    from typer.testing import Result

    c = hot_cluster(3)
    try:
        def run(*args: str) -> Result:
            return CliRunner().invoke(app, ["--admin-url", c.admin_url, "brokers", *args],
                                      env={"COLUMNS": "80"})

        plain = run()
        assert run("list").stdout == plain.stdout != ""
        assert run("list", "test-cluster").stdout == plain.stdout
        assert run("leader-broker").stdout == run("--leader").stdout
        other = run("list", "prod")
        assert other.exit_code != 0 and "is test-cluster, not prod" in other.stderr
        bad = run("foo")
        assert bad.exit_code == 2
        assert "--leader prints the leader (pulsar-admin brokers leader-broker)" in bad.stderr
    finally:
        c.stop()


def test_the_commands_without_every_output_format_are_those_the_docs_name() -> None:
    """README and docs/index.md list the commands that do not take all of
    `-o table|json|yaml|csv|jsonl`; a newcomer tried `plans list -o json` (refused, as said) and
    found `plans show -o json` works (not said). The list is checked against the commands."""
    from typing import Any

    import typer.main

    from tests.cli.test_help_width import _paths

    root = typer.main.get_command(app)
    lacking = set()
    for path in _paths():
        cmd: Any = root
        for name in path:
            cmd = cmd.commands[name]
        if getattr(cmd, "commands", None):
            continue
        opt = next((p for p in cmd.params if "-o" in getattr(p, "opts", [])), None)
        choices = getattr(getattr(opt, "type", None), "choices", None) or []
        if list(choices) != ["table", "json", "yaml", "csv", "jsonl"]:
            lacking.add((" ".join(path), tuple(choices)))
    assert lacking == {("sandbox", ()), ("watch", ()), ("snapshot export", ()),
                       ("snapshot from-prometheus", ()), ("context add", ()),
                       ("context use", ()), ("context delete", ()), ("plans list", ()),
                       ("plans show", ("table", "json", "yaml")), ("plans approve", ()),
                       ("plans reject", ())}
    for page in (ROOT / "README.md", ROOT / "docs" / "index.md"):
        said = " ".join(page.read_text(encoding="utf-8").split())
        assert ("`sandbox` and `watch`" in said and "`context add|use|delete` and `plans`, "
                "whose `show` takes `-o json|yaml`: the plan itself)" in said), page
