"""A few lines of plain JDK code run from a test (never Pulsar's): the JDK-run order checks
compile a small file under ``tests/model/java/`` and feed it tab-separated lines on stdin. Each
such test is skipped, with the reason shown by ``pytest -rs``, when no JDK is on the PATH."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest

JAVA_DIR = Path(__file__).parent / "model" / "java"


def needs_jdk(what: str) -> pytest.MarkDecorator:
    """Skip when ``javac``/``java`` are missing, saying what goes unchecked."""
    return pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")),
                              reason=f"no JDK on the PATH (javac/java): {what}")


def run_java(name: str, build: Path, lines: list[str],
             where: Path = JAVA_DIR) -> dict[str, list[str]]:
    """Compile ``<where>/<name>.java`` (``tests/model/java`` unless said) into ``build`` (once)
    and run it on ``lines``; each output line ``id<TAB>item<TAB>…`` becomes ``{id: [item, …]}``."""
    if not (build / f"{name}.class").exists():
        subprocess.run(["javac", "-d", str(build), str(where / f"{name}.java")], check=True,
                       capture_output=True)
    out = subprocess.run(["java", "-cp", str(build), name], input="\n".join(lines) + "\n",
                         capture_output=True, text=True, check=True).stdout
    return {cid: rest for cid, *rest in (ln.split("\t") for ln in out.splitlines())}


def java_double(x: float) -> str:
    """``x`` as ``Double.parseDouble`` reads it (``repr`` says ``nan``/``inf``)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)
