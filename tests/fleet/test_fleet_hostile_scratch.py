"""``fleet report`` and ``fleet whatif`` when Spark's own work is refused by the disk (hostile19).

The report and the replay write nothing through Spark, but Spark writes its shuffle and spill
files to its scratch space (``spark.local.dir``, ``SPARK_LOCAL_DIRS``, else ``/tmp``). Full, the
job failed under ``toPandas`` and lbctl said ``internal error: Py4JJavaError: An error occurred
while calling o286.getResult.`` after pyspark's warning had printed the whole Java stack trace.
They now say hostile18's one line, from the same cause search (``job_error``): ``cannot write
Spark's scratch space DIR (spark.local.dir): No space left on device``, exit 1.

A read-only ``--out`` was already one line naming the file (``write_files`` writes in Python);
it is held here as a guard, in ingest's words since walk21 (``cannot write PATH: REASON``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.fleet.session import from_spark, job_error, scratch_dirs
from tests.tmpfs import refusing_tmpfs

ROOT = Path(__file__).resolve().parents[2]


def _errors(stderr: str) -> list[str]:
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    assert "at org.apache" not in stderr and "toPandas attempted" not in stderr, stderr
    return [ln for ln in stderr.splitlines() if ln.startswith("lbctl: error:")]


# -- the one line, without Spark -------------------------------------------------------------------


class _Broken:
    """A session whose gateway is gone: every call to it fails."""

    @property
    def sparkContext(self) -> Any:
        raise ConnectionError("gateway gone")


def test_a_refusal_that_names_no_file_is_the_scratch_space_s() -> None:
    e = RuntimeError("Job aborted due to stage failure: java.io.IOException: No space left on "
                     "device")
    assert str(job_error(e, scratch="/data/tmp (spark.local.dir)")) == (
        "cannot write Spark's scratch space /data/tmp (spark.local.dir): No space left on device")
    # a refusal that names its file, or a job that writes a directory, says that instead
    named = RuntimeError("java.io.FileNotFoundException: /data/in/x.parquet (Permission denied)")
    assert str(job_error(named, scratch="/tmp (x)")) == (
        "cannot read or write /data/in/x.parquet: Permission denied")
    assert str(job_error(e, writing="/out", scratch="/tmp (x)")) == (
        "cannot write /out: No space left on device")
    # no refusal: Spark's log, as before
    assert str(job_error(RuntimeError("boom"), scratch="/tmp (x)")).startswith(
        "Spark job failed: boom")


def test_the_scratch_space_of_a_session_that_is_gone_is_still_said() -> None:
    assert "java.io.tmpdir" in scratch_dirs(_Broken())


def test_only_spark_s_own_errors_are_mapped() -> None:
    assert not from_spark(ValueError("x")) and not from_spark(OSError(28, "No space"))
    fake = type("Py4JJavaError", (Exception,), {"__module__": "py4j.protocol"})
    assert from_spark(fake("An error occurred while calling o1.getResult."))


# -- with the tests' Spark session -----------------------------------------------------------------


@pytest.mark.spark
@pytest.mark.parametrize("command", ["report", "whatif"])
def test_a_job_refused_by_the_disk_is_one_line_in_process(
        spark: Any, ingested: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        command: str) -> None:
    """A real ``Py4JJavaError`` (the JVM refused a write on a full disk) out of the report's or
    the replay's Spark work, in the session the suite keeps: one line, exit 1, the session still
    usable afterwards."""
    data, _ = ingested
    with refusing_tmpfs(tmp_path / "mnt", "full") as mnt:
        def refused(*_: Any, **__: Any) -> Any:
            jvm = spark.sparkContext._jvm
            out = jvm.java.io.FileOutputStream(str(mnt / "shuffle_0_0_0.data"))
            out.write(bytearray(1 << 20))  # raises: the JVM's IOException, through Py4J
            raise AssertionError("the write went through")

        module = "lbctl.fleet.report" if command == "report" else "lbctl.fleet.whatif"
        monkeypatch.setattr(f"{module}.compute", refused)
        args = ["fleet", command, str(data), "-q"]
        if command == "report":
            args += ["--out", str(tmp_path / "rep"), "--no-plot"]
        res = CliRunner().invoke(app, args)
    assert res.exit_code == 1, res.stderr
    assert _errors(res.stderr) == [f"lbctl: error: cannot write Spark's scratch space "
                                   f"{scratch_dirs(spark)}: No space left on device"]
    assert not (tmp_path / "rep").exists()
    assert spark.range(3).count() == 3  # the session lives on


@pytest.mark.spark
def test_a_read_only_out_is_one_line(ingested: Any, tmp_path: Path) -> None:
    data, _ = ingested
    with refusing_tmpfs(tmp_path / "ro", "read-only") as ro:
        # ingest's words for the same refusal (walk21): ``cannot write PATH: REASON``
        for out, words in ((ro / "report", f"cannot write {ro / 'report'}: Read-only file system"),
                           (ro, f"cannot write {ro / 'clusters.csv'}: Read-only file system")):
            res = CliRunner().invoke(app, ["fleet", "report", str(data), "--out", str(out), "-q",
                                           "--no-plot"])
            assert res.exit_code == 1, res.stderr
            assert _errors(res.stderr) == [f"lbctl: error: {words}"]


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("how", ["conf", "env"])
def test_report_with_its_scratch_space_full_is_one_line(ingested: Any, tmp_path: Path,
                                                        how: str) -> None:
    """The real thing: a Spark of its own (the suite's session cannot move its scratch space)
    whose ``spark.local.dir`` (or ``SPARK_LOCAL_DIRS``) is a full disk."""
    data, _ = ingested
    with refusing_tmpfs(tmp_path / "full", "full") as full:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "LBCTL_SPARK_CLASS_CACHE": "off"}
        args = [sys.executable, "-m", "lbctl", "fleet", "report", str(data), "--out",
                str(tmp_path / "rep"), "-q", "--no-plot", "--master", "local[1]"]
        if how == "conf":
            args += ["--conf", f"spark.local.dir={full}"]
        else:
            env["SPARK_LOCAL_DIRS"] = str(full)
        p = subprocess.run(args, env=env, text=True, capture_output=True, timeout=300,
                           stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    setting = "spark.local.dir" if how == "conf" else "SPARK_LOCAL_DIRS"
    assert _errors(p.stderr) == [f"lbctl: error: cannot write Spark's scratch space {full} "
                                 f"({setting}): No space left on device"]
    assert not (tmp_path / "rep").exists()
