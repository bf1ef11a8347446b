"""Issue 12 (and 13 #9, #17) at the command line: one clean line for hostile input, terminal-safe
output, connection flags anywhere, prompts that can be left, bounded work."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl import __version__
from lbctl.cli.app import app

VALID = Path(__file__).parent.parent / "data" / "valid"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MINIMAL = json.loads((VALID / "minimal.json").read_text())


def _one_error_line(res) -> str:
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("lbctl: error: "), res.stderr
    assert "Traceback" not in res.output
    return lines[0]


@pytest.mark.parametrize("flag", ["-v", "-V", "--version"])
def test_version_flags(runner: CliRunner, flag: str) -> None:
    res = runner.invoke(app, [flag])
    assert res.exit_code == 0 and res.stdout.strip() == f"lbctl {__version__}"


def test_connection_flags_after_the_subcommand(runner: CliRunner) -> None:
    """pulsar-admin users type `lbctl monitor-brokers --admin-url …`."""
    from lbctl.sandbox import hot_cluster

    c = hot_cluster(2)
    try:
        res = runner.invoke(app, ["monitor-brokers", "--once", "--summary", "-o", "json",
                                  "--admin-url", c.admin_url, "--request-timeout=5", "--debug"])
        assert res.exit_code == 0, res.output
        assert "lbctl: debug: GET" in res.stderr
        assert len(json.loads(res.stdout)["brokers"]) == 2
        res = runner.invoke(app, ["snapshot", "export", "--admin-url", c.admin_url, "-o", "-"])
        assert "--admin-url" not in res.stderr
    finally:
        c.stop()


def test_hoisting_keeps_values_and_the_double_dash() -> None:
    from lbctl.cli.connection import hoist_global_options

    flags = {"--admin-url": True, "--debug": False}
    assert hoist_global_options(["recommend", "f.json", "--admin-url", "u", "--debug"], flags) == [
        "--admin-url", "u", "--debug", "recommend", "f.json"]
    assert hoist_global_options(["--admin-url", "u", "recommend", "--admin-url=v"], flags) == [
        "--admin-url", "u", "--admin-url=v", "recommend"]
    assert hoist_global_options(["recommend", "--", "--debug"], flags) == [
        "recommend", "--", "--debug"]


def test_short_auth_plugin_names_are_accepted(runner: CliRunner) -> None:
    res = runner.invoke(app, ["--admin-url", "http://127.0.0.1:9", "--auth-plugin",
                              "AuthenticationToken", "--auth-params", "token:abc",
                              "--request-timeout", "1", "monitor-brokers", "--once"])
    assert "unsupported auth plugin" not in res.stderr
    assert res.exit_code == 3  # it got as far as connecting
    res = runner.invoke(app, ["--auth-plugin", "AuthenticationNope", "--auth-params", "x",
                              "monitor-brokers", "--once"])
    line = _one_error_line(res)
    assert "AuthenticationToken, AuthenticationTls, AuthenticationOAuth2, AuthenticationBasic" in line
    help_text = runner.invoke(app, ["--help"]).stdout
    for name in ("--token", "--token-file", "--tls-cert-file", "--tls-key-file",
                 "--broker-host-allow", "env:VAR", "token:-"):
        assert name in help_text


def test_ctrl_d_and_ctrl_c_at_the_prompt_exit_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import typer

    from lbctl.sandbox import hot_cluster

    monkeypatch.setattr("lbctl.cli.connection.is_terminal", lambda _s: True)
    c = hot_cluster(2)
    try:
        rng = c.ranges("public/default")[0]
        for how in ("eof", "interrupt"):
            if how == "interrupt":
                def ctrl_c(*_a, **_k):
                    raise typer.Abort()
                monkeypatch.setattr("typer.confirm", ctrl_c)
            res = CliRunner().invoke(app, ["--admin-url", c.admin_url, "unload", "public/default",
                                           "-b", rng], input="")
            assert res.exit_code == 130, res.output
            assert "internal error" not in res.output and "Traceback" not in res.output
            assert "nothing was sent" in res.stderr
        assert c.requests("PUT") == []
    finally:
        c.stop()


def test_error_lines_escape_control_characters_and_stay_short(runner: CliRunner,
                                                                tmp_path: Path) -> None:
    weird = tmp_path / "a\nlbctl: fake line\x1b]0;pwned\x07.json"
    res = runner.invoke(app, ["recommend", str(weird)])
    line = _one_error_line(res)
    assert "\\n" in line and "\x1b" not in res.stderr and "\x07" not in res.stderr
    res = runner.invoke(app, ["unload", "t" * 10_000_000 + "/ns"])
    line = _one_error_line(res)
    assert len(line) < 3000


def test_tables_escape_names_from_the_snapshot(runner: CliRunner, tmp_path: Path) -> None:
    snap = json.loads(json.dumps(MINIMAL))
    snap["cluster"] = "demo\x1b]0;pwned\x07\x1b[2J"
    snap["brokers"]["broker-1\x1b[2J:8080"] = snap["brokers"].pop("broker-1:8080")
    f = tmp_path / "evil.json"
    f.write_text(json.dumps(snap))
    for cmd in (["recommend"], ["explain"], ["snapshot", "validate"], ["monitor-brokers",
                                                                         "--snapshot"]):
        res = runner.invoke(app, [*cmd, str(f)])
        assert res.exit_code == 0, res.output
        assert "\x1b]" not in res.stdout and "\x1b[2J" not in res.stdout and "\x07" not in res.stdout
    res = runner.invoke(app, ["recommend", str(f), "-o", "json"])
    assert json.loads(res.stdout)  # machine formats keep the data, JSON-escaped


@pytest.mark.parametrize("flag", ["--broker-conf", "--client-conf"])
def test_fifo_configuration_files_are_refused(runner: CliRunner, tmp_path: Path, flag: str) -> None:
    fifo = tmp_path / "conf"
    os.mkfifo(fifo)
    args = (["recommend", str(VALID / "minimal.json"), "--broker-conf", str(fifo)]
            if flag == "--broker-conf" else ["--client-conf", str(fifo), "monitor-brokers", "--once"])
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("res", runner.invoke(app, args)), daemon=True)
    t.start()
    t.join(15)
    assert not t.is_alive(), "hung on a FIFO"
    assert "FIFO" in _one_error_line(box["res"])


def test_split_bundle_takes_a_full_name_and_refuses_ignored_positions(runner: CliRunner) -> None:
    snap = str(EXAMPLES / "flow-or-qps.json")
    st = json.loads(Path(snap).read_text())
    ns = next(iter(st["namespaces"]))
    b = st["namespaces"][ns]["boundaries"]
    rng = f"{b[0]}_{b[1]}"
    res = runner.invoke(app, ["split-bundle", ns, "-b", f"{ns}/{rng}", "--snapshot", snap])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["split-bundle", ns, "-b", rng, "-sb", "0x10000000", "--snapshot",
                              snap])
    assert res.exit_code == 2 and "specified_positions_divide" in _one_error_line(res)


def test_a_sequence_spanning_centuries_is_not_simulated_cycle_by_cycle(runner: CliRunner,
                                                                     tmp_path: Path) -> None:
    a = json.loads(json.dumps(MINIMAL))
    b = json.loads(json.dumps(MINIMAL))
    a["capturedAt"], b["capturedAt"] = "0001-01-01T00:00:00Z", "9999-01-01T00:00:00Z"
    a["capturedAt"] = 0
    f = tmp_path / "span.jsonl"
    f.write_text(json.dumps(a) + "\n" + json.dumps(b) + "\n")
    res = runner.invoke(app, ["simulate", str(f)])
    assert res.exit_code == 2 and "--cycles" in _one_error_line(res)
    res = runner.invoke(app, ["simulate", str(f), "--cycles", "1000000000"])
    assert res.exit_code == 2 and "at most 100,000" in _one_error_line(res)


def test_snapshot_validate_refuses_what_recommend_refuses(runner: CliRunner, tmp_path: Path) -> None:
    snap = json.loads(json.dumps(MINIMAL))
    snap["config"]["loadBalancerLoadSheddingStrategy"] = "NoSuchShedder"
    f = tmp_path / "s.json"
    f.write_text(json.dumps(snap))
    res = runner.invoke(app, ["snapshot", "validate", str(f)])
    assert res.exit_code == 1 and "NoSuchShedder" in _one_error_line(res)
    assert runner.invoke(app, ["recommend", str(f)]).exit_code != 0


@pytest.mark.parametrize("args", [["--bundle", "public/default/0x00000000_0x10000000"],
                                  ["--broker", ""], ["--broker", "broker-9:8080"]])
def test_explain_names_an_unknown_bundle_or_broker(runner: CliRunner, args: list[str]) -> None:
    res = runner.invoke(app, ["explain", str(VALID / "minimal.json"), *args])
    assert res.exit_code == 2
    assert "not in the snapshot" in _one_error_line(res)


def test_a_huge_weight_follows_java_arithmetic_in_simulate(runner: CliRunner) -> None:
    res = runner.invoke(app, ["simulate", str(EXAMPLES / "hot-broker.json"), "--cycles", "2",
                              "--set", "loadBalancerCPUResourceWeight=1e308", "-o", "json"])
    assert res.exit_code == 0, res.output
    assert "internal error" not in res.stderr


def test_non_finite_numbers_are_null_and_said_to_be() -> None:
    import io

    from lbctl.render import render

    class R:
        def to_data(self):
            return {"a": float("inf"), "b": [float("nan"), None, 1.5]}

        def to_rows(self):
            return []

        def to_text(self):
            return ""

    out = io.StringIO()
    render(R(), "json", out)
    doc = json.loads(out.getvalue())  # valid JSON: the figures are null, and said to be
    assert doc["a"] is None and doc["b"] == [None, None, 1.5]
    assert [w["code"] for w in doc["warnings"]] == ["non-finite"] * 2
    assert all("JSON shows null" in w["message"] for w in doc["warnings"])


def test_max_input_size_flag(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["--max-input-size", "1K", "recommend", str(VALID / "minimal.json")])
    assert res.exit_code == 1 and "--max-input-size" in _one_error_line(res)
    res = runner.invoke(app, ["--max-input-size", "lots", "recommend", str(VALID / "minimal.json")])
    assert res.exit_code != 0 and "--max-input-size" in res.stderr
    from lbctl.safe.files import LIMITS, Limits

    LIMITS.max_input_bytes = Limits().max_input_bytes
    assert sys.modules["lbctl.safe.files"].LIMITS is LIMITS


#: a name carrying a colour of its own, a bidi override, a bell and a newline (a fake next line)
_SGR_NAME = "\x1b[31mEVIL\x1b[0m\u202e\x07\r\nlbctl: fake line"


@pytest.mark.parametrize("cmd", [["recommend"], ["explain"], ["snapshot", "validate"], ["doctor"],
                                 ["simulate", "--cycles", "2"], ["propose"],
                                 ["monitor-brokers", "--snapshot"]])
def test_colour_sequences_and_newlines_in_names_are_shown_escaped(runner: CliRunner,
                                                                  tmp_path: Path,
                                                                  cmd: list[str]) -> None:
    """The table format used to let any ``ESC [ … m`` through (it looked like lbctl's own colour)
    and kept a name's newline (a forged line); colour is not even on here (not a terminal)."""
    snap = json.loads(json.dumps(MINIMAL))
    snap["brokers"][_SGR_NAME + ":8080"] = snap["brokers"].pop("broker-2:8080")
    f = tmp_path / "evil\x1b[32m\nlbctl: fake line.json"  # validate names the file, not brokers
    f.write_text(json.dumps(snap))
    res = runner.invoke(app, [*cmd, str(f)])
    assert res.exit_code in (0, 1), res.output  # doctor: 1 = warnings found
    assert "\x1b" not in res.stdout and "\u202e" not in res.stdout and "\x07" not in res.stdout
    assert ("\\e[32m" if cmd[0] == "snapshot" else "\\e[31mEVIL") in res.stdout
    assert not any(line.startswith("lbctl: fake line") for line in res.stdout.splitlines())


def test_only_lbctls_own_colours_survive_on_a_colour_terminal() -> None:
    from lbctl.render.display import Display, paint, using
    from lbctl.safe.text import terminal_safe

    with using(Display(color=True)):
        ours = paint("Success/Overloaded", "success")
    text = terminal_safe(ours + " \x1b[38;5;196mred\x1b[5m", keep_colors=True)
    assert text.startswith(ours) and "\\e[38;5;196m" in text and "\\e[5m" in text


@pytest.mark.parametrize(("args", "code", "says"), [
    (["journal", "--since", "99999999999999d"], 2, "reaches back before year 1"),
    (["examples", "--copy", "/dev/null/x"], 1, "/dev/null/x: Not a directory"),
    (["recommend", "x" * 5000 + ".json"], 1, "File name too long"),
])
def test_system_refusals_are_one_line_not_internal_errors(runner: CliRunner, args: list[str],
                                                          code: int, says: str) -> None:
    res = runner.invoke(app, args)
    line = _one_error_line(res)
    assert res.exit_code == code and says in line and "internal error" not in line, line


@pytest.mark.parametrize("args", [
    ["watch", "--interval", "nan", "--count", "1"],
    ["apply", str(VALID / "minimal.json"), "--interval", "nan", "--dry-run"],
    ["apply", str(VALID / "minimal.json"), "--max-age", "nan", "--dry-run"],
    ["apply", str(VALID / "minimal.json"), "--verify-timeout", "nan", "--dry-run"],
    ["apply", str(VALID / "minimal.json"), "--max-age", "inf", "--dry-run"],
    ["drain", "b:1", "--interval", "nan", "--dry-run"],
    ["monitor-brokers", "--snapshot", str(VALID / "minimal.json"), "--interval", "nan"],
    ["propose", str(VALID / "minimal.json"), "--time-limit", "nan"],
])
def test_nan_and_inf_are_refused_by_every_number_option(runner: CliRunner,
                                                         args: list[str]) -> None:
    """The CLI library's ranges let ``nan`` through; before, these reached the cluster (or
    ``time.sleep(nan)`` between an apply's batches)."""
    res = runner.invoke(app, ["--admin-url", "http://127.0.0.1:9", *args])
    line = _one_error_line(res)
    assert res.exit_code == 2 and "is not a finite number" in line, line


def _hostile_yaml(tmp_path: Path, kind: str) -> str:
    p = tmp_path / f"{kind}.yaml"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "deep":
        p.write_text("[" * 100_000 + "]" * 100_000)
    elif kind == "binary":
        p.write_bytes(b"\x00\xb6\xff garbage \x80")
    elif kind == "dup":
        p.write_text("brokers: {}\nbrokers: {}\n")
    else:
        return "/dev/zero"
    return str(p)


@pytest.mark.parametrize("kind", ["fifo", "device", "deep", "binary", "dup"])
@pytest.mark.parametrize("flag", ["simulate --hosts", "sandbox --timeline"])
def test_hosts_and_timeline_files_are_read_as_boundedly_as_snapshots(runner: CliRunner,
                                                                       tmp_path: Path,
                                                                       flag: str,
                                                                       kind: str) -> None:
    """Both used to ``yaml.safe_load`` whatever ``open()`` gave: a FIFO or /dev/zero hung,
    100,000 brackets were a RecursionError, bad bytes a UnicodeDecodeError (internal errors)."""
    command, option = flag.split()
    args = [command, str(VALID / "minimal.json")] if command == "simulate" else [command]
    res = runner.invoke(app, [*args, option, _hostile_yaml(tmp_path, kind), "-p", "0"]
                        if command == "sandbox" else [*args, option, _hostile_yaml(tmp_path, kind)])
    line = _one_error_line(res)
    assert res.exit_code == 2 and "internal error" not in line, line


def _near_double_max(o: object) -> object:
    if isinstance(o, dict):
        return {k: 1.7e308 if (k in ("usage", "limit") or k.startswith(("msgRate", "msgThroughput")))
                and isinstance(v, int | float) else _near_double_max(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_near_double_max(v) for v in o]
    return o


@pytest.mark.parametrize("cmd", [["recommend"], ["explain"], ["propose"],
                                 ["simulate", "--cycles", "2"]])
def test_figures_near_the_double_range_are_not_an_internal_error(cmd: list[str],
                                                                 tmp_path: Path) -> None:
    """Every rate, throughput, usage and limit 1.7e308 (valid Java doubles; their sums are inf,
    as in Java): recommend and explain died in ``round(inf)``, numpy's overflow warnings reached
    stderr with their source lines. Run as a process: the warnings filter is set by ``main``.
    Pulsar's strategies decide on such figures as Java does; lbctl's planner refuses them in one
    line (a usage that is NaN % in Java's float arithmetic: there is nothing to plan on)."""
    import subprocess

    f = tmp_path / "huge.json"
    f.write_text(json.dumps(_near_double_max(MINIMAL)))
    res = subprocess.run([sys.executable, "-m", "lbctl", *cmd, str(f)], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert "Traceback" not in res.stderr and "Warning" not in res.stderr, res.stderr
    if cmd == ["propose"]:  # lbctl's own planner cannot plan on a NaN % usage: one line, exit 1
        assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
        assert "is not a finite percentage" in res.stderr
        return
    assert res.returncode == 0, res.stderr


def test_one_huge_limit_does_not_break_the_simulators_load_model(tmp_path: Path) -> None:
    """A cpu limit of 1e308 on one broker: the model's least squares squared it (``x ** 2``
    raises OverflowError where Java's ``x * x`` is Infinity)."""
    snap = json.loads(json.dumps(MINIMAL))
    snap["brokers"]["broker-1:8080"]["cpu"]["limit"] = 1e308
    f = tmp_path / "huge-limit.json"
    f.write_text(json.dumps(snap))
    res = CliRunner().invoke(app, ["simulate", str(f), "--cycles", "2"])
    assert res.exit_code == 0 and "internal error" not in res.stderr, res.stderr
