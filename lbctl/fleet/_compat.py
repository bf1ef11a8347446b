"""The one seam to pyspark: imported on demand, with an install hint when it is missing.

Every other fleet module asks here for the pyspark modules it needs (``sql()``, ``functions()``,
``types()``, ``window()``) inside the function that runs a job, so importing :mod:`lbctl.fleet`
never starts or even loads Spark. When pyspark is not installed the user gets one line that says
how to install it, instead of an ``ImportError`` traceback (the idea of great_expectations'
``compatibility/pyspark.py``, without import-time side effects).
"""

from __future__ import annotations

from types import ModuleType

from lbctl.errors import LbctlError

INSTALL_HINT = "pyspark is not installed; install the Spark extra: pip install 'lbctl[spark]'"


class SparkUnavailable(LbctlError):
    """pyspark (or Java, which it needs) is missing; the message says how to fix it."""


def _require(name: str) -> ModuleType:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing = getattr(e, "name", "") or ""
        if missing.split(".")[0] in ("pyspark", "py4j"):
            raise SparkUnavailable(INSTALL_HINT) from None
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


def is_available() -> bool:
    """True when pyspark can be imported (used by tests to skip cleanly)."""
    import importlib.util

    return importlib.util.find_spec("pyspark") is not None
