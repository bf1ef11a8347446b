"""`lbctl snapshot validate` and the malformed-input corpus through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lbctl.cli.app import app
from tests.paths import EXAMPLES, ROOT, example_files

MALFORMED = ROOT / "tests" / "data" / "malformed"


def test_validate_every_example(runner) -> None:
    files = [str(p) for p in example_files()]
    res = runner.invoke(app, ["snapshot", "validate", *files])
    assert res.exit_code == 0, res.output
    for f in files:
        assert f"{f}: OK" in res.stdout


def test_validate_json(runner) -> None:
    res = runner.invoke(app, ["snapshot", "validate", str(EXAMPLES / "balanced.json"), "-o", "json"])
    (summary,) = json.loads(res.stdout)
    assert summary["brokers"] == 4 and summary["bundles"] > 0


def _malformed() -> list[Path]:
    return sorted(p for p in MALFORMED.iterdir() if p.name != "EXPECTED.json") \
        if MALFORMED.exists() else []


@pytest.mark.parametrize("path", _malformed(), ids=lambda p: p.name)
@pytest.mark.parametrize("command", [["snapshot", "validate"], ["recommend"], ["explain"]])
def test_malformed_inputs_one_line_exit_1(runner, path: Path, command: list[str]) -> None:
    res = runner.invoke(app, [*command, str(path)])
    assert res.exit_code in (1, 2), res.output
    err = res.stderr.strip().splitlines()
    assert len(err) == 1, res.stderr
    assert err[0].startswith("lbctl: error:")
    assert "Traceback" not in res.output
    assert path.name in err[0] or "mix" in err[0] or "cluster" in err[0]


def test_corpus_is_large_enough() -> None:
    assert len(_malformed()) >= 25


@pytest.mark.slow
def test_directory_instead_of_file(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "lbctl", "snapshot", "validate", str(tmp_path)],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
