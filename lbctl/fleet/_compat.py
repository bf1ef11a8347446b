"""The one seam to pyspark: imported on demand, with an install hint when it is missing.

Every other fleet module asks here for the pyspark modules it needs (``sql()``, ``functions()``,
``types()``, ``window()``) inside the function that runs a job, so importing :mod:`lbctl.fleet`
never starts or even loads Spark. When pyspark is not installed the user gets one line that says
how to install it, instead of an ``ImportError`` traceback (the idea of great_expectations'
``compatibility/pyspark.py``, without import-time side effects).
"""

from __future__ import annotations

from types import ModuleType

from lbctl.errors import ExitStatus, LbctlError

INSTALL_HINT = "pyspark is not installed; install the fleet extra: pip install 'lbctl[fleet]'"
PANDAS_HINT = "pandas is not installed; install the fleet extra: pip install 'lbctl[fleet]'"
JAVA_HINT = ("Spark needs Java: install Java 17 (or later) or set JAVA_HOME to a JDK; "
             "no java found on PATH")


class SparkUnavailable(LbctlError):
    """pyspark (or Java, which it needs) is missing; the message says how to fix it."""


class MissingExtra(SparkUnavailable):
    """The fleet extra is not installed: exit 2, as every missing extra (docs/exit-codes.md)."""

    exit_code = ExitStatus.USAGE


def _require(name: str) -> ModuleType:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing = getattr(e, "name", "") or ""
        if missing.split(".")[0] in ("pyspark", "py4j"):
            raise MissingExtra(INSTALL_HINT) from None
        if missing.split(".")[0] in ("pandas", "pyarrow", "numpy"):
            raise MissingExtra(PANDAS_HINT.replace("pandas", missing.split(".")[0])) from None
        raise SparkUnavailable(f"cannot import {name}: {e}") from None


def sql() -> ModuleType:
    """``pyspark.sql`` (SparkSession, DataFrame)."""
    return _require("pyspark.sql")


def functions() -> ModuleType:
    """``pyspark.sql.functions``."""
    return _require("pyspark.sql.functions")


def types() -> ModuleType:
    """``pyspark.sql.types``."""
    return _require("pyspark.sql.types")


def window() -> ModuleType:
    """``pyspark.sql.window``."""
    return _require("pyspark.sql.window")


def storage_level() -> ModuleType:
    """``pyspark`` itself (``StorageLevel``)."""
    return _require("pyspark")


def java() -> str | None:
    """The ``java`` Spark would start: ``$JAVA_HOME/bin/java`` when JAVA_HOME is set (Spark's own
    rule), else the one on ``PATH``; None when there is none."""
    import os
    import shutil

    home = os.environ.get("JAVA_HOME")
    if home:
        exe = os.path.join(home, "bin", "java")
        return exe if os.access(exe, os.X_OK) else None
    return shutil.which("java")


def require_fleet() -> None:
    """pyspark, pandas, pyarrow and Java, checked before a fleet command starts anything: each
    missing piece is one line saying how to get it."""
    import importlib.util

    for mod, hint in (("pyspark", INSTALL_HINT), ("pandas", PANDAS_HINT),
                      ("pyarrow", PANDAS_HINT.replace("pandas", "pyarrow"))):
        if importlib.util.find_spec(mod) is None:
            raise MissingExtra(hint)
    if java() is None:
        import os

        home = os.environ.get("JAVA_HOME")
        raise SparkUnavailable(JAVA_HINT if not home else
                               f"JAVA_HOME={home} has no bin/java: install Java 17 (or later) "
                               "or set JAVA_HOME to a JDK")


def is_available() -> bool:
    """True when pyspark can be imported (used by tests to skip cleanly)."""
    import importlib.util

    return importlib.util.find_spec("pyspark") is not None
