"""Local-mode defaults are fitted to the machine, --conf wins, and --debug shows them."""

from __future__ import annotations

import json
import os

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.fleet.session import (
    SMALL_JOB_BYTES,
    TINY_JOB_BYTES,
    default_conf,
    effective_conf,
    local_tuning,
)
from tests.fleet.independent import CORPUS


def test_local_defaults_follow_the_machine_and_the_input_size() -> None:
    cores = os.cpu_count() or 2
    tiny = local_tuning(10_000)  # one task per core: a task per few rows costs more than it gives
    assert tiny["spark.sql.shuffle.partitions"] == str(cores)
    assert tiny["spark.sql.files.minPartitionNum"] == str(cores)
    small = local_tuning(TINY_JOB_BYTES)
    assert small["spark.sql.shuffle.partitions"] == str(max(8, 2 * cores))
    assert small["spark.sql.files.maxPartitionBytes"] == "64m"
    assert small["spark.sql.files.minPartitionNum"] == str(4 * cores)
    mib = int(small["spark.driver.memory"].removesuffix("m"))
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    assert mib == max(1024, min(8192, total // 4))
    # C1 only, with room for Spark's generated classes (48 MiB filled up and stopped the JIT)
    assert small["spark.driver.extraJavaOptions"] == \
        "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
    # and the serial collector for a tiny input (G1's threads cost a short JVM more than they save)
    assert tiny["spark.driver.extraJavaOptions"] == \
        "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC"
    assert "spark.driver.extraJavaOptions" not in local_tuning(SMALL_JOB_BYTES)  # C2 for big jobs
    # Spark's internal settings are never set (public configuration only)
    assert not {k for k in tiny if k.startswith("spark.sql.codegen.")}
    assert "spark.driver.extraJavaOptions" not in local_tuning(None)
    assert "spark.sql.shuffle.partitions" in local_tuning(None)
    assert local_tuning(None)["spark.sql.shuffle.partitions"] == str(max(8, 2 * cores))


def test_a_cluster_gets_no_local_sizes_and_conf_wins() -> None:
    assert "spark.driver.memory" not in default_conf("spark://h:7077")
    assert "spark.sql.shuffle.partitions" not in default_conf("yarn")
    rows = {k: (v, origin) for k, v, origin in
            effective_conf("local[2]", {"spark.sql.shuffle.partitions": "3"}, 5)}
    assert rows["spark.sql.shuffle.partitions"] == ("3", "--conf")
    assert rows["spark.sql.files.maxPartitionBytes"] == ("64m", "lbctl default")
    assert rows["spark.driver.host"] == ("127.0.0.1", "lbctl default")


@pytest.mark.spark
def test_debug_prints_every_setting_with_its_origin(spark, tmp_path) -> None:
    r = CliRunner().invoke(app, ["--debug", "fleet", "ingest", str(CORPUS / "west"), "--out",
                                 str(tmp_path / "o"), "-o", "json", "-q", "--conf",
                                 "spark.sql.shuffle.partitions=3"])
    assert r.exit_code == 0, r.output
    assert "lbctl: debug: spark spark.sql.shuffle.partitions=3 (--conf)\n" in r.stderr
    assert "lbctl: debug: spark spark.sql.files.maxPartitionBytes=64m (lbctl default)\n" in r.stderr
    assert "reusing the Spark session already running in this process" in r.stderr
    assert json.loads(r.stdout)["rows"]["brokers"] == 16


def test_start_while_overlaps_the_start_and_raises_its_error_after_both_ended() -> None:
    """The start runs in another thread while the Python work runs here; neither error is lost
    and the start is always waited for (no JVM left starting behind a failed command)."""
    import threading

    from lbctl.fleet.session import start_while

    here = threading.get_ident()
    both = threading.Barrier(2, timeout=10)  # each side waits for the other: they overlap

    def start() -> int:
        both.wait()
        return threading.get_ident()

    def meanwhile() -> str:
        both.wait()
        return "read"

    started_in, done = start_while(start, meanwhile)
    assert started_in != here and done == "read"
    ended: list[str] = []

    def failing_start() -> None:
        ended.append("start")
        raise RuntimeError("no JVM")

    def slow_meanwhile() -> None:
        import time

        time.sleep(0.05)
        ended.append("meanwhile")

    with pytest.raises(RuntimeError, match="no JVM"):
        start_while(failing_start, slow_meanwhile)
    assert sorted(ended) == ["meanwhile", "start"]

    def failing_meanwhile() -> None:
        raise ValueError("bad input")

    ended.clear()
    with pytest.raises(ValueError, match="bad input"):
        start_while(lambda: ended.append("start"), failing_meanwhile)
    assert ended == ["start"]

