"""walk23: what walk22's newcomer walk left.

* A Prometheus auth error says where it went and which credential lbctl sent, from where (the
  ``--prometheus-conf`` file's keys, an environment variable, the URL's user info), or that it
  sent none and how to give one — on the one error line.
"""

from __future__ import annotations

import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app


def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PULSAR_CLIENT_CONF", "PULSAR_HOME", "LBCTL_CONTEXT", "LBCTL_PROM_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LBCTL_CONTEXTS", str(tmp_path / "contexts.json"))
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))


# --- 3. Prometheus auth errors say where and which credential ---------------------------------


class _Refusing(http.server.BaseHTTPRequestHandler):
    """A Prometheus behind a proxy that refuses every request with the server's status."""

    def do_GET(self) -> None:
        status = self.server.status  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"denied\n")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(params=[401, 403])
def refusing(request: pytest.FixtureRequest) -> Iterator[tuple[str, int]]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Refusing)
    server.status = request.param  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", request.param
    finally:
        server.shutdown()
        server.server_close()


def _pull(tmp_path: Path, url: str, *extra: str, env: dict[str, str] | None = None
          ) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["snapshot", "from-prometheus", "-f", str(tmp_path / "o.jsonl"),
                                 "--prometheus-url", url, "--since", "1h", *extra], env=env)
    return r.exit_code, r.stderr


def _conf(tmp_path: Path, params: str) -> Path:
    conf = tmp_path / "prom.conf"
    conf.write_text("authPlugin=org.apache.pulsar.client.impl.auth.AuthenticationToken\n"
                    f"authParams={params}\n")
    return conf


def _one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_a_refusal_without_credentials_says_none_was_sent_and_how_to_give_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusing: tuple[str, int]) -> None:
    _env(tmp_path, monkeypatch)
    url, status = refusing
    code, err = _pull(tmp_path, url)
    line = _one_line(err)
    assert code == (5 if status == 401 else 6)
    assert f"GET {url}/api/v1/" in line and f" {status} " in line, line
    assert "no credential was sent" in line and "--prometheus-conf FILE" in line, line
    assert "USER:PASS@ in --prometheus-url" in line, line


def test_a_refusal_names_the_conf_file_and_the_token_source_never_the_token(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusing: tuple[str, int]) -> None:
    _env(tmp_path, monkeypatch)
    url, status = refusing
    token = tmp_path / "prom.jwt"
    token.write_text("s3cr3t-token\n")
    conf = _conf(tmp_path, f"file://{token}")
    line = _one_line(_pull(tmp_path, url, "--prometheus-conf", str(conf))[1])
    assert f"the token file {token}" in line, line
    assert f"authPlugin/authParams in --prometheus-conf {conf}" in line, line
    assert "s3cr3t" not in line

    conf = _conf(tmp_path, "env:LBCTL_PROM_TOKEN")
    line = _one_line(_pull(tmp_path, url, "--prometheus-conf", str(conf),
                           env={"LBCTL_PROM_TOKEN": "s3cr3t-env"})[1])
    assert "$LBCTL_PROM_TOKEN" in line and f"--prometheus-conf {conf}" in line, line
    assert "s3cr3t" not in line

    conf = _conf(tmp_path, "token:s3cr3t-inline")
    line = _one_line(_pull(tmp_path, url, "--prometheus-conf", str(conf))[1])
    assert f"bearer token of token auth, from authPlugin/authParams in --prometheus-conf {conf}" \
        in line, line
    assert "s3cr3t" not in line


def test_a_refusal_of_the_urls_user_and_password_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refusing: tuple[str, int]) -> None:
    _env(tmp_path, monkeypatch)
    url, _ = refusing
    line = _one_line(_pull(tmp_path, url.replace("//", "//ops:pw-s3cr3t@"))[1])
    assert "basic auth with the user name and password in --prometheus-url" in line, line
    assert "s3cr3t" not in line and "ops:" not in line


@pytest.mark.parametrize(("params", "env", "start"), [
    ("file:///nonexistent/prom.jwt", {}, "auth: token file /nonexistent/prom.jwt: no such file"),
    ("env:LBCTL_PROM_TOKEN", {}, "auth: the environment variable 'LBCTL_PROM_TOKEN'"),
    ("", {}, "auth: AuthenticationToken needs"),
])
def test_a_bad_credential_in_the_conf_names_the_url_and_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, params: str, env: dict[str, str],
        start: str) -> None:
    """Before, "auth: token file …: no such file" alone: the same words as the admin client's,
    so nothing said it was Prometheus' credential, nor which file named it."""
    _env(tmp_path, monkeypatch)
    conf = _conf(tmp_path, params)
    code, err = _pull(tmp_path, "http://127.0.0.1:9", "--prometheus-conf", str(conf), env=env)
    line = _one_line(err)
    assert code == 1 and line.startswith(f"lbctl: error: {start}"), line
    assert line.endswith(f"(for --prometheus-url http://127.0.0.1:9, from authPlugin/authParams "
                         f"in --prometheus-conf {conf})"), line


def test_a_token_file_that_goes_away_later_is_named_with_its_origin(tmp_path: Path) -> None:
    """The token file is re-read per request: a later read's error has the same ending."""
    from lbctl.admin.prometheus import PrometheusConfig, client_from_config
    from lbctl.errors import ConfigError

    token = tmp_path / "prom.jwt"
    token.write_text("tok\n")
    conf = _conf(tmp_path, f"file://{token}")
    client = client_from_config(PrometheusConfig.read("http://127.0.0.1:9", conf, 5.0))
    token.unlink()
    with pytest.raises(ConfigError, match=r"no such file \(for --prometheus-url "
                       r"http://127\.0\.0\.1:9, from authPlugin/authParams in"):
        client.auth.headers()
    assert client.reader().auth_note == client.auth_note


# --- 1. a stopped drain, and its resume, say which steps remain and what resume does -------------


def test_step_ranges_join_runs() -> None:
    from lbctl.apply.runner import step_ranges

    assert step_ranges([3, 4, 5, 6]) == "#3\u2013#6"
    assert step_ranges([9, 2, 5, 6, 7, 2]) == "#2, #5\u2013#7, #9"
    assert step_ranges([1]) == "#1"
    assert step_ranges([]) == ""


@pytest.mark.parametrize(("kind", "concurrency", "interval", "flags"), [
    ("apply", 2, 30.0, "--concurrency 2 --interval 30"),  # walk23's apply stopped and resumed
    ("apply", 1, 0.0, ""),
    ("drain", 1, 1.0, "--interval 1"),  # drain -m 1
    ("drain", 1000, 0.0, "--concurrency 1000"),  # drain -m 0: no limit
    ("fill", 2, 60.0, "--concurrency 2 --interval 60"),
    ("fill", 1, 0.0, ""),
])
def test_a_drains_or_fills_resume_line_keeps_its_pace(
        tmp_path: Path, kind: str, concurrency: int, interval: float, flags: str) -> None:
    """``apply --resume`` alone sends at apply's defaults, back to back: a fill (2 a minute), or
    an apply run with ``--interval 30``, resumed from its own ``resume with:`` line moved
    everything left at once."""
    from lbctl.apply.planfile import PlanFile
    from lbctl.apply.runner import ApplyOptions, ApplyReport, pace_flags
    from lbctl.render.apply_view import ApplyView

    pace = pace_flags(ApplyOptions(kind=kind, concurrency=concurrency, interval=interval))
    assert pace == flags
    pf = PlanFile("p.json", "d", "c", 0, "m", "s", "p", ())
    report = ApplyReport(pf, "c", "r1", [], result="partial", why="stopped by a signal",
                         journal=tmp_path / "j.jsonl", kind=kind, pace=pace)
    text = " ".join(ApplyView(report).to_text().split())
    run = " --run r1" if kind != "apply" else ""
    assert text.endswith(f"resume with: lbctl apply --resume {tmp_path / 'j.jsonl'}{run}"
                         + (f" {flags}" if flags else "")), text


def _steps(states: list[str]) -> list[Any]:
    from lbctl.apply.planfile import PlannedAction
    from lbctl.apply.runner import Step

    return [Step(PlannedAction(i + 1, "unload", f"t/n/0x{i:08x}_0x{i + 1:08x}", "b1:8080",
                               destination="b2:8080"), "valid", state=st)
            for i, st in enumerate(states)]


def test_a_stopped_drains_line_says_what_resuming_does() -> None:
    from lbctl.apply.drain import stopped_note
    from lbctl.apply.planfile import PlanFile
    from lbctl.apply.runner import ApplyReport

    pf = PlanFile("p.json", "d", "c", 0, "m", "s", "p", ())
    r = ApplyReport(pf, "c", "r1", _steps(["done", "done", "not-sent", "not-sent", "in-doubt",
                                           "not-sent"]), result="partial", kind="drain")
    note = stopped_note(r, "b1:8080", paused=True)
    assert "the 3 unload(s) left (#3\u2013#4, #6)" in note, note
    assert "does not wait until the broker owns nothing" in note, note
    assert note.endswith("lbctl drain b1:8080 --pause-balancer does)"), note
    assert "--pause-balancer" not in stopped_note(r, "b1:8080", paused=False)
    r.steps = _steps(["done", "failed"])
    assert stopped_note(r, "b1:8080", paused=False) == ""  # nothing a resume sends


def _broker_names(url: str) -> list[str]:
    r = CliRunner().invoke(app, ["--admin-url", url, "brokers", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    return re.findall(r'"(?:broker|name)": "([^"]+)"', r.stdout)


@pytest.mark.live
def test_a_drain_stopped_by_apply_stop_then_resumed_says_what_remains(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole walk: ``drain --pause-balancer`` in its own process, ``apply --stop`` after its
    first move, then ``apply --resume JOURNAL --run ID``. The stopped drain's last line says what
    a resume does (the unloads left, not the wait); its ``resume with:`` line keeps the drain's
    pace; the resume says which steps are left and that the balancer is not paused again."""
    import json
    import os
    import subprocess
    import sys
    import time

    from lbctl.sandbox import hot_cluster

    _env(tmp_path, monkeypatch)
    monkeypatch.setenv("LBCTL_LOCK_DIR", str(tmp_path / "locks"))
    journal = tmp_path / "journal.jsonl"
    c = hot_cluster(3)
    try:
        url = c.admin_url
        name = _broker_names(url)[-1]
        env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": str(Path(__file__).parents[2])}
        proc = subprocess.Popen(
            [sys.executable, "-m", "lbctl", "--admin-url", url, "drain", name, "--yes",
             "--pause-balancer"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # the first move verified: the stop comes next
            if journal.exists() and '"verified"' in journal.read_text():
                break
            time.sleep(0.1)
        stop = subprocess.run([sys.executable, "-m", "lbctl", "apply", "--stop"], env=env,
                              capture_output=True, text=True, timeout=60)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 13, (out, err)
        assert "the 'resume with:' line it prints continues it" in stop.stdout, stop.stdout
        flat = " ".join(out.split())
        run = [json.loads(x) for x in journal.read_text().splitlines()
               if '"apply-start"' in x][0]["run"]
        assert f"resume with: lbctl apply --resume {journal} --run {run} --interval 1" in flat
        last = err.strip().splitlines()[-1]
        assert re.search(r"resuming sends the (\d+) unload\(s\) left \(#\d", last), last
        assert f"lbctl drain {name} --pause-balancer does)" in last, last
        for line in out.splitlines():  # a path longer than the line stays whole, alone
            assert len(line) <= 80 or len(line.split()) == 1, line

        r = CliRunner().invoke(app, ["--admin-url", url, "apply", "--resume", str(journal),
                                     "--run", run, "--dry-run"], env={"COLUMNS": "80"})
        assert r.exit_code == 0, (r.stdout, r.stderr)
        head = " ".join(r.stdout.split("\nplan")[0].split())
        m = re.search(rf"resuming the drain of {re.escape(name)} \(run {run}\): (\d+) of its "
                      r"(\d+) unload\(s\) left \(#\d+", head)
        assert m is not None, head
        assert "only those are sent" in head and "the balancer is not paused again" in head, head
        assert f"(then run lbctl drain {name})" in head, head
        assert f"dry run: nothing was sent ({int(m[2]) - int(m[1])} already-done, {m[1]} would " \
               "be sent" in " ".join(r.stdout.split()), r.stdout
    finally:
        c.stop()


def test_apply_resume_of_an_apply_run_adds_no_drain_line(
        tmp_path: Path) -> None:
    from lbctl.apply.drain import resume_note
    from lbctl.apply.journal import RunHistory, StepHistory
    from lbctl.apply.planfile import PlanFile, PlannedAction

    acts = tuple(PlannedAction(i, "unload", f"t/n/0x{i:08x}_0x{i + 1:08x}", "b2:8080",
                               destination="b1:8080") for i in (1, 2, 3, 4))
    pf = PlanFile("p.json", "d", "c", 0, "m", "s", "p", acts)
    h = RunHistory("p.json", "d", "c", steps={1: StepHistory(sent=True, confirmed=True)})
    line = resume_note("fill", "b1:8080", "r9", pf, h, paused_now=False, paused_by_run=False)
    assert line.startswith("resuming the fill of b1:8080 (run r9): 3 of its 4 move(s) left "
                           "(#2\u2013#4), 1 done"), line
    assert "--concurrency and --interval" in line
    line = resume_note("drain", None, "r9", pf, h, paused_now=True, paused_by_run=True)
    assert "still paused (put it back with lbctl drain --restore --yes)" in line, line
    assert line.endswith("(then run lbctl drain BROKER)"), line


# --- 4. the walk -----------------------------------------------------------------------------------


def test_a_partial_runs_line_says_each_count_once(tmp_path: Path) -> None:
    """walk23: "partial: 2 done, 4 not-sent — stopped by a signal; 4 not-sent"."""
    from lbctl.apply.planfile import PlanFile
    from lbctl.apply.runner import ApplyReport
    from lbctl.render.apply_view import ApplyView

    pf = PlanFile("p.json", "d", "c", 0, "m", "s", "p", ())
    r = ApplyReport(pf, "c", "r1", _steps(["done", "done", "not-sent", "not-sent", "failed"]),
                    result="partial", why="stopped by a signal; 1 failed; 2 not-sent",
                    journal=tmp_path / "j.jsonl")
    first = ApplyView(r).to_text().splitlines()[0]
    assert first == "partial: 2 done, 1 failed, 2 not-sent — stopped by a signal", first
    r.why = "step #3 failed: 500; 1 failed; 3 not-sent"  # a count the rows do not say stays
    first = ApplyView(r).to_text().splitlines()[0]
    assert first.endswith("— step #3 failed: 500; 3 not-sent"), first
    r.why = "2 not-sent"
    assert ApplyView(r).to_text().splitlines()[0] == "partial: 2 done, 1 failed, 2 not-sent"


@pytest.mark.parametrize("width", [60, 80, 100])
@pytest.mark.parametrize("flag", ["--status", "--stop"])
def test_apply_status_and_stop_lines_fit_the_terminal(
        monkeypatch: pytest.MonkeyPatch, width: int, flag: str) -> None:
    """walk23: ``apply --status`` printed "  run ID: 2 of 6 step(s) sent, 2 done, 1 verified,
    0 failed; running; journal PATH" whole, 130 columns."""
    import lbctl.watch.executor_state as state

    journal = "/tmp/w23/home/.local/state/lbctl/journal.jsonl"
    lines = ["cluster test-cluster: lbctl drain 127.0.0.1:41495 — pid 21829 (root@vm), since "
             "2026-11-28T20:07:07Z",
             f"  run c440e06880ae: 2 of 6 step(s) sent, 2 done, 1 verified, 0 failed; running; "
             f"journal {journal}"]
    monkeypatch.setattr(state, "status_lines", lambda: lines)
    monkeypatch.setattr(state, "stop", lambda: lines)
    r = CliRunner().invoke(app, ["apply", flag], env={"COLUMNS": str(width)})
    assert r.exit_code == 0, r.stderr
    out = r.stdout.splitlines()
    assert len(out) > 2
    for x in out:
        assert len(x) <= width, out
    words = r.stdout.split()
    for whole in (journal, "127.0.0.1:41495", "2026-11-28T20:07:07Z", "c440e06880ae:"):
        assert whole in words, out
    assert " ".join(words) == " ".join(" ".join(lines).split())  # nothing lost, in order
