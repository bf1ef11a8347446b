"""`lbctl doctor` end to end: formats, exit status, options, bad input."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml

from lbctl.cli.app import app
from lbctl.doctor.builtin import RULES
from lbctl.render.doctor_view import DOCTOR_SCHEMA
from tests.paths import DATA, EXAMPLES

D = DATA / "doctor"


def test_healthy_cluster_exits_0(runner) -> None:
    res = runner.invoke(app, ["doctor", str(D / "base.json")])
    assert res.exit_code == 0, res.output
    assert "no finding" in res.stdout and "exit status 0" in res.stdout


def test_warnings_exit_1_with_rule_why_and_fix(runner) -> None:
    res = runner.invoke(app, ["doctor", str(D / "idle-broker.json")])
    assert res.exit_code == 1
    out = res.stdout
    assert "WARNING idle-broker" in out and "found:" in out and "why:" in out and "fix:" in out
    assert "#12160" in out


def test_errors_exit_2(runner) -> None:
    res = runner.invoke(app, ["doctor", str(D / "base.json"), "--broker-conf",
                              str(D / "out-of-range.conf"), "-o", "json"])
    assert res.exit_code == 2
    data = json.loads(res.stdout)
    assert data["format"] == "lbctl/doctor@1" and data["status"] == 2
    assert data["summary"] == {"error": 2, "warning": 0, "info": 0}
    assert {f["rule"] for f in data["findings"]} == {"setting-out-of-range"}
    assert data["rulesRun"] == len(RULES)


def test_pulsar_version_option(runner) -> None:
    args = ["doctor", str(D / "base.json"), "--broker-conf", str(D / "avg-shedder-half.conf"),
            "-o", "json"]
    old = json.loads(runner.invoke(app, [*args, "--pulsar-version", "3.0.5"]).stdout)
    new = json.loads(runner.invoke(app, [*args, "--pulsar-version", "3.0.6"]).stdout)
    assert old["pulsarVersion"] == "3.0.5" and new["pulsarVersion"] == "3.0.6"
    assert "strategy-unavailable" in {f["rule"] for f in old["findings"]}
    assert "strategy-unavailable" not in {f["rule"] for f in new["findings"]}


def test_csv_yaml_and_rule_selection(runner) -> None:
    snap = str(EXAMPLES / "rolling-restart.yaml")
    res = runner.invoke(app, ["doctor", snap, "-o", "csv"])
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert list(rows[0]) == DOCTOR_SCHEMA.names
    assert "idle-broker" in {r["rule"] for r in rows}
    res = runner.invoke(app, ["doctor", snap, "-o", "yaml", "--rule", "idle-broker"])
    data = yaml.safe_load(res.stdout)
    assert [f["rule"] for f in data["findings"]] == ["idle-broker"] and res.exit_code == 1
    res = runner.invoke(app, ["doctor", snap, "-o", "json", "--skip", "idle-broker"])
    assert "idle-broker" not in {f["rule"] for f in json.loads(res.stdout)["findings"]}


@pytest.mark.parametrize("args, code, message", [
    (["--rule", "no-such-rule"], 2, "unknown doctor rule"),
    (["--pulsar-version", "banana"], 2, "--pulsar-version"),
    (["--broker-conf", "/nonexistent/broker.conf"], None, "broker.conf"),
])
def test_bad_input_is_one_line(runner, args, code, message) -> None:
    res = runner.invoke(app, ["doctor", str(D / "base.json"), *args])
    assert res.exit_code != 0 and (code is None or res.exit_code == code)
    assert res.stderr.startswith("lbctl: error:") and message in res.stderr
    assert "Traceback" not in res.output and res.stdout == ""


def test_unreadable_snapshot_is_an_error_not_a_report(runner, tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    res = runner.invoke(app, ["doctor", str(bad)])
    assert res.exit_code == 1 and res.stdout == ""
    assert res.stderr.startswith("lbctl: error:")


def test_help_documents_the_exit_status(runner) -> None:
    res = runner.invoke(app, ["doctor", "--help"])
    assert res.exit_code == 0
    text = " ".join(res.stdout.split())
    assert "1 at least one warning, no error" in text and "2 at least one error" in text
