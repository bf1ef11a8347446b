"""Distributed, for real: a Spark standalone master and one worker on loopback.

Both are the classes that ship with pyspark (``bin/spark-class …deploy.master.Master`` and
``…deploy.worker.Worker``), started by the test on free loopback ports and stopped after it. The
same ``lbctl fleet ingest`` and ``report`` run against them twice — as the CLI with ``--master
spark://…`` and as an application under ``spark-submit`` (the application file is
``lbctl/cli/fleet.py``) — and must give exactly what local mode gives. The executors run on the
worker in JVMs and Python workers of their own; inputs and outputs are on the local disk both see.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pandas as pd  # noqa: TID253 - the tables are read back with pandas
import pytest

import lbctl.cli.fleet as fleet_cli
from tests.fleet.independent import CORPUS

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPARK_HOME = Path(pytest.importorskip("pyspark", reason="the fleet extra is not installed").__file__).parent
APP = Path(fleet_cli.__file__)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1",
               PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable,
               SPARK_NO_DAEMONIZE="1")
    env.pop("PYSPARK_GATEWAY_PORT", None)
    return env


@pytest.fixture(scope="module")
def standalone(tmp_path_factory) -> Iterator[str]:
    """``spark://127.0.0.1:PORT`` with one worker registered; both stopped afterwards."""
    logs = tmp_path_factory.mktemp("standalone")
    port, ui, worker_ui = _free_port(), _free_port(), _free_port()
    url = f"spark://127.0.0.1:{port}"
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    procs: list[subprocess.Popen[bytes]] = []
    master_log = open(logs / "master.log", "wb")  # noqa: SIM115 - closed in the finally below
    worker_log = open(logs / "worker.log", "wb")  # noqa: SIM115
    try:
        procs.append(subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(port), "--webui-port", str(ui)],
            env=_env(), stdout=master_log, stderr=subprocess.STDOUT))
        procs.append(subprocess.Popen(
            [spark_class, "org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1",
             "--cores", "2", "--memory", "2g", "--webui-port", str(worker_ui),
             "--work-dir", str(logs / "work")],
            env=_env(), stdout=worker_log, stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as r:
                    if json.load(r).get("aliveworkers", 0) >= 1:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                pytest.fail("the standalone master/worker did not come up:\n"
                            + (logs / "master.log").read_text()[-2000:]
                            + (logs / "worker.log").read_text()[-2000:])
            time.sleep(0.5)
        yield url
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        master_log.close()
        worker_log.close()


def _run(cmd: list[str], code: int = 0) -> dict:
    p = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == code, p.stderr[-3000:]
    # spark-submit's PythonRunner merges the driver's stderr into its stdout: the last line of an
    # ingest that skipped a file follows the JSON there
    text, _, last = p.stdout.rstrip("\n").rpartition("\n")
    return dict(json.loads(text if code and last.startswith("lbctl: error: ") else p.stdout))


#: a few seconds of work: C1-compiled JVMs start faster, and one core per executor task is plenty
QUICK = {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
         "spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1",
         "spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false",
         # the executors read the corpus (Spark's JSON reader, lbctl's reader in tasks), as the
         # local test session does, not the driver alone as a small run would
         "spark.lbctl.fleet.smallInputBytes": "0"}


def _cli(*args: str) -> list[str]:
    confs = [a for k, v in QUICK.items() for a in ("--conf", f"{k}={v}")]
    return [str(Path(sys.executable).parent / "lbctl"), "fleet", *args, *confs, "-q"]


def _submit(master: str, *args: str) -> list[str]:
    confs = [a for k, v in QUICK.items() for a in ("--conf", f"{k}={v}")]
    return [str(SPARK_HOME / "bin" / "spark-submit"), "--master", master, *confs, str(APP),
            *args, "-q"]


@pytest.fixture(scope="module")
def local_results(run_fleet, ingested, tmp_path_factory):
    out, ingest = ingested
    report = run_fleet("report", str(out), "--out", str(tmp_path_factory.mktemp("local")),
                       "-o", "json", "-q")
    return out, json.loads(ingest.stdout), json.loads(report.stdout)


def _same_tables(a: Path, b: Path) -> None:
    for table in ("snapshots", "brokers", "bundles", "topics"):
        x, y = pd.read_parquet(a / table), pd.read_parquet(b / table)
        cols = sorted(x.columns)
        assert sorted(y.columns) == cols
        x = x[cols].astype(str).sort_values(cols).reset_index(drop=True)
        y = y[cols].astype(str).sort_values(cols).reset_index(drop=True)
        pd.testing.assert_frame_equal(x, y, obj=table)


def _same_report(a: dict, b: dict) -> None:
    assert a["clusters"] == b["clusters"]
    assert a["hotBundles"] == b["hotBundles"]


@pytest.mark.parametrize("how", ["cli --master", "spark-submit"])
def test_a_standalone_cluster_gives_what_local_mode_gives(how, standalone, local_results,
                                                          tmp_path) -> None:
    local_out, local_ingest, local_report = local_results
    out = tmp_path / "tables"
    if how == "spark-submit":
        ingest = _run(_submit(standalone, "ingest", str(CORPUS), "--out", str(out), "-o", "json"),
                      code=1)  # the corpus's broken.json
        report = _run(_submit(standalone, "report", str(out), "--out", str(out / "report"),
                              "-o", "json"))
    else:
        ingest = _run(_cli("ingest", str(CORPUS), "--out", str(out), "--master", standalone,
                           "-o", "json"), code=1)  # the corpus's broken.json
        report = _run(_cli("report", str(out), "--out", str(out / "report"), "--master",
                           standalone, "-o", "json"))
    for key in ("files", "skipped", "readers", "snapshots", "rows"):
        assert ingest[key] == local_ingest[key], key
    _same_tables(out, local_out)
    _same_report(report, local_report)
