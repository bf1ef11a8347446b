"""walk22: what walk21's newcomer walk left.

* An auth error whose credential a context gave says which context, where it came from
  (``--context``, ``$LBCTL_CONTEXT``, the current one) and how to leave it, on the one line.
* ``apply --resume`` without ``--run`` takes apply's runs only: a drain's open run (one running
  now holds the cluster lock) is named with the ``--run`` that resumes it, never acted on.
* A command quoted in a hint (``wrap_prose``, ``lbctl examples``) is never split.
* ``executor.request_lines``' heading is fitted to the width.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.executor import request_lines
from lbctl.safe.text import display_width


def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PULSAR_CLIENT_CONF", "PULSAR_HOME", "LBCTL_CONTEXT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LBCTL_CONTEXTS", str(tmp_path / "contexts.json"))
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))


# --- 1. an auth error names the context ----------------------------------------------------------


def _prod(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *extra: str) -> str:
    _env(tmp_path, monkeypatch)
    token = str(tmp_path / "missing.jwt")
    r = CliRunner().invoke(app, ["context", "add", "prod", "--admin-url", "http://127.0.0.1:9",
                                 *extra, "--token-file", token])
    assert r.exit_code == 0, r.stderr
    return token


@pytest.mark.parametrize(("args", "env", "words"), [
    ([], {}, ["context prod", "lbctl context use", "lbctl context delete prod"]),
    (["--context", "prod"], {}, ["--context prod", "drop --context"]),
    ([], {"LBCTL_CONTEXT": "prod"}, ["context prod", "$LBCTL_CONTEXT", "unset LBCTL_CONTEXT"]),
])
def test_an_auth_error_says_which_context_and_how_to_leave_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], env: dict[str, str],
        words: list[str]) -> None:
    """walk21: after context.md's session every command failed with "auth: token file
    /etc/pulsar/admin.jwt: no such file", a file the operator never typed, and nothing said a
    context was current."""
    token = _prod(tmp_path, monkeypatch)
    if not env:  # another current context, so only --context names prod
        if args:
            r = CliRunner().invoke(app, ["context", "add", "dev", "--admin-url",
                                         "http://127.0.0.1:9"])
            assert r.exit_code == 0, r.stderr
    else:
        r = CliRunner().invoke(app, ["context", "add", "dev", "--admin-url", "http://127.0.0.1:9"])
        assert r.exit_code == 0, r.stderr
    r = CliRunner().invoke(app, [*args, "brokers"], env=env)
    assert r.exit_code != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"token file {token}" in lines[0], lines
    for w in words:
        assert w in lines[0], lines


def test_flags_auth_is_not_said_to_come_from_a_context(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _prod(tmp_path, monkeypatch)
    other = str(tmp_path / "other.jwt")
    r = CliRunner().invoke(app, ["brokers", "--token-file", other])
    assert r.exit_code != 0
    assert f"token file {other}" in r.stderr and "context" not in r.stderr, r.stderr


def test_a_token_file_removed_later_still_names_the_context(tmp_path: Path) -> None:
    """The token file is read again on every request: a later read's error says it too."""
    from lbctl.admin.auth import make_auth
    from lbctl.admin.contexts import origin
    from lbctl.errors import ConfigError

    f = tmp_path / "t.jwt"
    f.write_text("abc\n")
    auth = make_auth("AuthenticationToken", f"file://{f}", origin=origin("prod", "current"))
    assert auth.headers() == {"Authorization": "Bearer abc"}
    f.unlink()
    with pytest.raises(ConfigError, match=r"no such file \(from context prod, .*context use"):
        auth.headers()


def test_a_context_without_auth_adds_nothing(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from lbctl.admin.clientconf import ConnectionOptions, resolve_connection
    from lbctl.admin.contexts import with_context

    _env(tmp_path, monkeypatch)
    r = CliRunner().invoke(app, ["context", "add", "dev", "--admin-url", "http://127.0.0.1:9"])
    assert r.exit_code == 0, r.stderr
    opts = with_context(ConnectionOptions(), None)
    assert opts.admin_url == "http://127.0.0.1:9" and opts.context_origin is None
    assert resolve_connection(opts).auth_origin is None
    stored = json.loads((tmp_path / "contexts.json").read_text())
    assert "context_origin" not in json.dumps(stored)  # never kept in the file


# --- 2. apply --resume takes apply's runs only ----------------------------------------------------


def _start(run: str, kind: str | None, digest: str, plan: str) -> dict[str, Any]:
    rec: dict[str, Any] = {"run": run, "state": "apply-start", "plan": plan,
                           "planDigest": digest, "cluster": "c"}
    if kind is not None:
        rec["kind"] = kind
    return rec


def test_resume_without_run_never_takes_a_drain_s_open_run() -> None:
    from lbctl.apply.journal import last_run
    from lbctl.errors import ConfigError

    apply_run = [_start("a1", None, "d1", "p1"),
                 {"run": "a1", "state": "apply-end", "result": "partial"}]
    running = [*apply_run, _start("dr", "drain", "d2", "p2")]
    with pytest.raises(ConfigError) as e:
        last_run(running, journal="/j")
    said = str(e.value)
    assert "drain" in said and "--resume /j --run dr" in said and "--run a1" in said, said
    # stopped partial: still the drain's, still named
    with pytest.raises(ConfigError, match="--run dr"):
        last_run([*running, {"run": "dr", "state": "apply-end", "result": "partial"}])
    # named: taken, whatever its kind
    assert last_run(running, "dr").plan == "p2"
    # finished: not resumable, so the apply run before it is the one
    done = [*running, {"run": "dr", "state": "apply-end", "result": "complete"}]
    assert last_run(done).plan == "p1"
    # a fill's open run alone
    with pytest.raises(ConfigError, match=r"is a fill .*--run f1$"):
        last_run([_start("f1", "fill", "d3", "p3")])
    # only a finished drain: no apply run to resume
    with pytest.raises(ConfigError, match="no apply run to resume"):
        last_run([_start("d", "drain", "d", "p"),
                  {"run": "d", "state": "apply-end", "result": "complete"}])


def test_a_drain_s_resume_line_names_its_run(tmp_path: Path) -> None:
    from lbctl.apply.planfile import PlanFile
    from lbctl.apply.runner import ApplyReport
    from lbctl.render.apply_view import ApplyView

    plan = PlanFile.__new__(PlanFile)
    for kind, tail in (("drain", " --run r9"), ("apply", "")):
        report = ApplyReport(plan, "c", "r9", [], result="partial", why="stopped",
                             journal=tmp_path / "j.jsonl", kind=kind)
        text = " ".join(ApplyView(report).to_text().split())
        assert f"resume with: lbctl apply --resume {tmp_path / 'j.jsonl'}{tail}" in text, text
        assert text.endswith(f"j.jsonl{tail}") or "--run" not in text, text


@pytest.fixture(scope="module")
def _sandbox():  # type: ignore[no-untyped-def]
    from lbctl.sandbox import hot_cluster

    c = hot_cluster(3)
    yield c
    c.stop()


@pytest.mark.live
def test_apply_resume_while_a_drain_runs_names_the_drain_and_sends_nothing(
        _sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real drain's journal cut before its end (a drain running now, or killed): ``apply
    --resume JOURNAL`` took that run and was then stopped by the cluster lock. Now it says the
    run is a drain's and how to resume it, one line, and the journal gains nothing."""
    _env(tmp_path, monkeypatch)
    journal = tmp_path / "journal.jsonl"
    url = _sandbox.admin_url
    brokers = CliRunner().invoke(app, ["--admin-url", url, "brokers", "-o", "json"])
    assert brokers.exit_code == 0, brokers.stderr
    text = brokers.stdout
    name = re.findall(r'"(?:broker|name)": "([^"]+)"', text)[0]
    r = CliRunner().invoke(app, ["--admin-url", url, "drain", name, "--yes", "--timeout", "20"],
                           env={"COLUMNS": "80"})
    assert r.exit_code in (0, 13), (r.stdout, r.stderr)
    lines = journal.read_text().splitlines()
    starts = [i for i, x in enumerate(lines) if json.loads(x).get("state") == "apply-start"]
    assert starts and json.loads(lines[starts[0]]).get("kind") == "drain", lines[:3]
    run = json.loads(lines[starts[0]])["run"]
    ends = [i for i, x in enumerate(lines) if json.loads(x).get("state") == "apply-end"]
    cut = "\n".join(lines[:ends[0]]) + "\n"
    journal.write_text(cut)
    r = CliRunner().invoke(app, ["--admin-url", url, "apply", "--resume", str(journal), "--yes"])
    assert r.exit_code not in (0, 13), r.stdout
    said = r.stderr.strip().splitlines()
    assert len(said) == 1 and "drain" in said[0], said
    assert f"--resume {journal} --run {run}" in said[0], said
    assert journal.read_text() == cut  # nothing sent, nothing journaled


# --- 3. a quoted command is never split ------------------------------------------------------------


@pytest.mark.parametrize("width", [40, 50, 60, 70, 80, 90, 100, 120])
def test_the_examples_hint_keeps_each_command_whole(width: int) -> None:
    """At 80 columns the hint broke between `lbctl` and `recommend examples/hot-broker.json`."""
    r = CliRunner().invoke(app, ["examples"], env={"COLUMNS": str(width)})
    assert r.exit_code == 0, r.stderr
    hint = r.stdout.rstrip("\n").split("\n\n")[-1].splitlines()
    for command in ("`lbctl examples --copy examples`",
                    "`lbctl recommend examples/hot-broker.json`"):
        assert any(command in x for x in hint), (width, hint)
    for x in hint:
        assert len(x) <= width or re.fullmatch(r" *`[^`]*`[.,]?", x), (width, hint)


def test_wrap_prose_keeps_any_quoted_command_whole() -> None:
    import random

    from lbctl.render.tables import wrap_prose

    rng = random.Random(22)
    words = ["the", "bundle", "moves", "to", "broker-1:8080", "when", "asked", "a", "plan"]
    commands = ["`lbctl apply plan.json --yes`", "`lbctl drain broker-2:8080 --pause-balancer`",
                "`lbctl context use prod`", "`x`"]
    for _ in range(400):
        parts = [rng.choice(commands) if rng.random() < 0.2 else rng.choice(words)
                 for _ in range(rng.randint(3, 40))]
        text = " ".join(parts)
        width = rng.randint(20, 100)
        lines = wrap_prose(text, width).split("\n")
        assert " ".join(" ".join(lines).split()) == text  # nothing lost, the order kept
        for x in lines:
            assert x.count("`") % 2 == 0, (width, lines)  # no command split across lines
            assert len(x) <= width or len(re.sub(r"`[^`]*`", "C", x).split()) == 1, (width, x)


# --- 4. request_lines' heading ------------------------------------------------------------------


@pytest.mark.parametrize("width", [40, 44, 48, 52, 54, 60, 80])
def test_request_lines_heading_fits(width: int) -> None:
    base = "http://pulsar-broker-0.pulsar.svc:8080"
    items = [(f"PUT {base}/admin/v2/namespaces/public/default/0x0_0x{i}/unload",
              f"#{i} unload public/default/0x0_0x{i} from broker-1") for i in range(3)]
    lines = request_lines("lbctl would send 3 request(s)", base, items, width)
    heading = lines[:next(i for i, x in enumerate(lines) if x.startswith("  PUT"))]
    for x in heading:
        assert display_width(x) <= width or len(x.split()) == 1, (width, heading)
    said = " ".join(" ".join(heading).split())
    assert said in ("lbctl would send 3 request(s):", f"lbctl would send 3 request(s) to {base}:")
    assert request_lines("lbctl would send 3 request(s)", base, items, None)[0] == \
        "lbctl would send 3 request(s):"


# --- 3b. apply's and drain's own lines keep a command whole (fit_line) ---------------------------


@pytest.mark.parametrize("width", [50, 60, 70, 80, 100])
def test_fit_line_keeps_a_command_whole_when_it_fits(width: int) -> None:
    """On the drain page's session at 80 columns, rebalance-after's warning broke "lbctl apply
    PLAN.json --concurrency 2 --interval" / "60", and the rollback line "(lbctl apply" / "PATH)"."""
    from lbctl.apply.runner import fit_line

    cases = [
        ("lbctl: warning: apply it paced: lbctl apply PLAN.json --concurrency 2 --interval 60 "
         "(at most 2 bundle(s) every 60 s)", "lbctl apply PLAN.json --concurrency 2 --interval 60"),
        ("rollback plan: /tmp/w22/rollback-1040e5a3a87a.json  (lbctl apply "
         "/tmp/w22/rollback-1040e5a3a87a.json)", "(lbctl apply /tmp/w22/rollback-1040e5a3a87a.json)"),
        ("partial run: stopped; journal /var/j.jsonl; resume with lbctl apply --resume "
         "/var/j.jsonl --run 0123456789ab", "lbctl apply --resume /var/j.jsonl --run 0123456789ab"),
    ]
    for line, command in cases:
        out = fit_line(line, width)
        assert " ".join(" ".join(out).split()) == " ".join(line.split())  # nothing lost
        if len(command) <= width - 4:
            assert any(command in x for x in out), (width, out)
            for x in out:
                assert display_width(x) <= width or command in x, (width, out)
        else:  # longer than a line: broken at its blanks, as before
            assert all(display_width(x) <= width or len(x.split()) == 1 for x in out), out
    # a line without a command breaks as before: the prose "lbctl:" prefix is not one
    assert fit_line("lbctl: warning: " + "word " * 30, 40)[0] == "lbctl: warning: " + "word " * 4 + "word"


@pytest.mark.live
def test_rebalance_after_s_paced_command_is_whole_at_80_columns(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from lbctl.sandbox import hot_cluster

    _env(tmp_path, monkeypatch)
    c = hot_cluster(3)  # its own: the module's sandbox has been drained by then
    try:
        b = CliRunner().invoke(app, ["--admin-url", c.admin_url, "brokers", "-o", "json"])
        name = re.findall(r'"(?:broker|name)": "([^"]+)"', b.stdout)[-1]
        r = CliRunner().invoke(app, ["--admin-url", c.admin_url, "rebalance-after", name,
                                     "-o", "json"], env={"COLUMNS": "80"})
    finally:
        c.stop()
    assert r.exit_code == 0, r.stderr
    said = [x for x in r.stderr.splitlines() if "lbctl apply" in x]
    assert said and re.search(r"lbctl apply \S+ --concurrency \d+ --interval \d+", said[0]), \
        r.stderr
