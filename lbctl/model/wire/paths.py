"""JSON paths and values in lbctl's error messages: ``brokers["b1:8080"].lastStats["t/ns/0x…"]``
names a place in a document, :func:`show` what was found there (one short line). Shared by the
declarations' error walk (:mod:`lbctl.model.wire.problems`) and the readers' own rules.
"""

import json
import math
from datetime import datetime

__all__ = ["join", "key_path", "show"]


def key_path(key: object) -> str:
    """``["b1:8080"]``: a map key as it appears in a JSON path (JSON-quoted, so one line)."""
    return "[" + json.dumps(key, ensure_ascii=False, default=str) + "]"


def join(path: str, name: str) -> str:
    """``path`` followed by the field ``name`` (or by a ``[…]`` part)."""
    if not path:
        return name
    return path + name if name.startswith("[") else f"{path}.{name}"


def show(value: object) -> str:
    """A short, single-line rendering of a decoded JSON/YAML value for an error message."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, int):
        text = str(value)
        return text if len(text) <= 40 else text[:37] + "..."
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 80 else text[:76] + '..."'
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, datetime):
        return "a YAML timestamp without a time zone" if value.tzinfo is None else "a timestamp"
    return f"a {type(value).__name__}"
