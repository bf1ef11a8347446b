"""A name lbctl will write that is a directory, a FIFO or a device is refused before the cluster
is read (hostile13): ``unload --journal DIR`` and ``snapshot export -f DIR`` asked the cluster
first and failed on the connection (exit 3) or, with a cluster, only after reading all of it.

The connection flags point at a closed port: refused first is exit 1, gone to the network is 3."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app

CLOSED = "http://127.0.0.1:9"

CASES = {
    "unload --journal DIR": ("dir", f"unload public/default --journal {{name}} --yes "
                                    f"--admin-url {CLOSED}", "is a directory"),
    "unload --journal FIFO": ("fifo", f"unload public/default --journal {{name}} --yes "
                                      f"--admin-url {CLOSED}", "is a FIFO"),
    "snapshot export -f DIR": ("dir", f"snapshot export -f {{name}} --admin-url {CLOSED}",
                               "is a directory"),
    "snapshot export --append FIFO": ("fifo", f"snapshot export --append {{name}} "
                                              f"--admin-url {CLOSED}", "is a FIFO"),
    "from-prometheus -f DIR": ("dir", f"snapshot from-prometheus --prometheus-url {CLOSED} "
                                      "--since 1h -f {name}", "is a directory"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_output_that_cannot_be_a_file_is_refused_before_the_cluster_is_asked(
        runner: CliRunner, tmp_path: Path, case: str) -> None:
    kind, line, words = CASES[case]
    name = tmp_path / "out.jsonl"
    if kind == "dir":
        name.mkdir()
    else:
        os.mkfifo(name)
    res = runner.invoke(app, line.replace("{name}", str(name)).split())
    assert res.exit_code == 1, (res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"lbctl: error: {name}: {words}"), res.stderr
