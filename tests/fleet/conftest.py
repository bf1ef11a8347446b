"""One local Spark session for the whole test run, and the fleet corpus ingested once.

Spark costs seconds to start and to warm up, so every Spark test shares the session-scoped
``spark`` fixture (local[2], loopback, quiet, the C1 JIT for a faster start) and the ``ingested``
fixture, which runs ``lbctl fleet ingest`` once on ``tests/data/fleet/corpus``. Tests that use
them are marked ``spark`` (``pytest -m "not spark"`` skips them all).
"""

from __future__ import annotations

import os
import shutil

import pytest
from typer.testing import CliRunner

from lbctl.cli.fleet import app as fleet_app
from tests.fleet.independent import CORPUS


@pytest.fixture(scope="session", autouse=True)
def _no_class_cache():
    """No test writes Spark's class cache (a ~150 MB archive) in the user's cache directory;
    tests/fleet/test_fleet_classcache.py points it at a temporary one."""
    saved = os.environ.get("LBCTL_SPARK_CLASS_CACHE")
    os.environ["LBCTL_SPARK_CLASS_CACHE"] = "off"
    yield
    if saved is None:
        os.environ.pop("LBCTL_SPARK_CLASS_CACHE", None)
    else:
        os.environ["LBCTL_SPARK_CLASS_CACHE"] = saved


@pytest.fixture(scope="session")
def spark():
    from lbctl.fleet.session import spark_session

    session = spark_session("local[2]", {
        "spark.sql.shuffle.partitions": "2",
        "spark.default.parallelism": "2",
        "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m "
                                         "-XX:+UseSerialGC",
        # the Spark readers (native JSON, lbctl's reader in tasks) even for the small corpora
        # here; test_fleet_small.py runs the small-input path against them
        "spark.lbctl.fleet.smallInputBytes": "0",
    }, app_name="lbctl-tests")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def run_fleet(spark):
    """Invoke `lbctl fleet …` in-process (it reuses the test session and leaves it running)."""
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(fleet_app, list(args), prog_name="lbctl fleet")

    return run


@pytest.fixture(scope="session")
def ingested(run_fleet, tmp_path_factory):
    """The corpus ingested once: (output directory, the CLI result of the ingest, -o json)."""
    out = tmp_path_factory.mktemp("fleet") / "tables"
    result = run_fleet("ingest", str(CORPUS), "--out", str(out), "-o", "json", "-q")
    return out, result


@pytest.fixture
def corpus_copy(tmp_path):
    dst = tmp_path / "corpus"
    shutil.copytree(CORPUS, dst)
    return dst
