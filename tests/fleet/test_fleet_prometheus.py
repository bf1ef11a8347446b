"""`lbctl fleet ingest --prometheus-url`: the history read from a real Prometheus goes to the
Parquet tables through the ordinary ingest (a temporary .jsonl under OUT/_prometheus/, removed)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.model.cluster import iso_time
from tests.prom_helpers import history, needs_prometheus, openmetrics, prometheus_with

H = history(brokers=3, bundles=12, steps=8, namespaces=2, cluster="from-prom")


@pytest.fixture(scope="module")
def prom() -> Iterator[str]:
    for srv in prometheus_with(openmetrics(H.snapshots, counters=H.counters)):
        yield srv.url


@needs_prometheus
@pytest.mark.spark
@pytest.mark.slow
def test_ingest_from_prometheus(run_fleet, prom: str, tmp_path) -> None:
    out = tmp_path / "tables"
    span = ["--start", iso_time(H.snapshots[0]["capturedAt"]),
            "--end", iso_time(H.snapshots[-1]["capturedAt"])]
    res = run_fleet("ingest", "--out", str(out), "--prometheus-url", prom, *span, "-o", "json",
                    "-q")
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["snapshots"]["read"] == 8 and data["snapshots"]["added"] == 8
    assert data["rows"]["brokers"] == 8 * 3 and data["rows"]["bundles"] == 8 * 12
    assert not (out / "_prometheus").exists()
    again = run_fleet("ingest", "--out", str(out), "--prometheus-url", prom, *span, "-o", "json",
                      "-q")
    assert json.loads(again.stdout)["snapshots"]["added"] == 0  # already stored


def test_ingest_needs_paths_or_prometheus(tmp_path) -> None:
    r = CliRunner().invoke(app, ["fleet", "ingest", "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    assert r.stderr == ("lbctl: error: give snapshot files or directories, or --prometheus-url "
                        "with --since/--start\n")
    r = CliRunner().invoke(app, ["fleet", "ingest", str(tmp_path), "--out", str(tmp_path / "o"),
                                 "--prometheus-url", "http://127.0.0.1:1", "--since", "1h"])
    assert r.exit_code == 2
    assert r.stderr == "lbctl: error: give snapshot files or --prometheus-url, not both\n"
    r = CliRunner().invoke(app, ["fleet", "ingest", str(tmp_path), "--out", str(tmp_path / "o"),
                                 "--since", "1h"])
    assert r.exit_code == 2 and r.stderr == "lbctl: error: --since needs --prometheus-url\n"
