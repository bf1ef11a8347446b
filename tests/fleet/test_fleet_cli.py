"""`lbctl fleet` errors and cheap paths: one line, an exit code, and no Spark start-up."""

from __future__ import annotations

from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.paths import EXAMPLES


def _run(*args: str):
    return CliRunner().invoke(app, ["fleet", *args])


def test_report_on_a_directory_that_was_not_ingested_is_a_usage_error(tmp_path) -> None:
    r = _run("report", str(tmp_path))
    assert r.exit_code == 2
    assert r.stderr == f"lbctl: error: {tmp_path}: no snapshots table; run `lbctl fleet ingest … --out {tmp_path}` first\n"


def test_whatif_needs_an_ingested_directory(tmp_path) -> None:
    r = _run("whatif", str(tmp_path), "--strategy", "OverloadShedder")
    assert r.exit_code == 2 and "no snapshots table" in r.stderr


def test_bad_conf_and_missing_input_are_one_line_errors(tmp_path) -> None:
    r = _run("ingest", str(tmp_path), "--out", str(tmp_path / "o"), "--conf", "spark.driver.memory")
    assert r.exit_code == 2
    assert r.stderr.startswith("lbctl: error: --conf 'spark.driver.memory': expected key=value")
    r = _run("ingest", str(tmp_path / "nope"), "--out", str(tmp_path / "o"))
    assert r.exit_code == 2 and r.stderr == f"lbctl: error: {tmp_path / 'nope'}: no such file or directory\n"


def test_a_bad_manifest_is_reported(tmp_path) -> None:
    (tmp_path / "_lbctl_fleet.json").write_text("[1, 2]")
    r = _run("ingest", str(tmp_path), "--out", str(tmp_path))
    assert r.exit_code == 2 and "not an lbctl fleet manifest" in r.stderr


def test_nothing_to_read_does_not_start_spark(tmp_path) -> None:
    r = _run("ingest", str(tmp_path), "--out", str(tmp_path / "o"), "-o", "json")
    assert r.exit_code == 0, r.output
    assert "starting Spark" not in r.stderr
    assert '"found": 0' in r.stdout


def test_without_java_one_line(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))  # no bin/java there
    args = ("ingest", str(EXAMPLES / "hot-broker.json"), "--out", str(tmp_path / "o"))
    res = _run(*args)
    assert res.exit_code == 1
    assert res.stderr.count("\n") == 1 and "install Java 17" in res.stderr
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path))
    res = _run(*args)
    assert res.exit_code == 1 and "install Java 17 (or later) or set JAVA_HOME" in res.stderr


def test_report_without_the_fleet_extra_is_one_line_before_anything_else(tmp_path, monkeypatch) -> None:
    """Neither pyspark nor matplotlib: the missing extra is the only line (no plots warning)."""
    import sys

    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    for table in ("snapshots", "brokers", "bundles"):
        (tmp_path / table).mkdir()
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = _run("report", str(tmp_path))
    assert r.exit_code == 2  # a missing extra: the same code for every command (issue 28 item 7)
    assert r.stderr == ("lbctl: error: pyspark is not installed; install the fleet extra: "
                        "pip install 'lbctl[fleet]'\n")
    assert r.stdout == ""
