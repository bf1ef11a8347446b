"""Non-finite figures in JSON output: every one is named with its path, once (lbctl.render)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from lbctl.render import json_safe, non_finite, to_json


def _paths(data: Any, path: str = "") -> list[str]:
    """The reference walk: every float that is not finite, by its path, in document order."""
    if isinstance(data, float):
        return [] if math.isfinite(data) else [f"{path or 'value'} is {data}"]
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in _paths(v, f"{path}.{k}" if path else str(k))]
    if isinstance(data, list | tuple):
        return [p for i, v in enumerate(data) for p in _paths(v, f"{path}[{i}]")]
    return []


def _document(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(6 if depth < 4 else 3)
    if kind == 0:
        return rng.choice([0.5, -0.0, 1e308, math.inf, -math.inf, math.nan, 3, "x", None, True])
    if kind in (1, 2):
        return rng.random()
    if kind == 3:
        return {rng.choice(["a", "b", "", "c.d"]) + str(i): _document(rng, depth + 1)
                for i in range(rng.randrange(4))}
    if kind == 4:
        return [_document(rng, depth + 1) for _ in range(rng.randrange(4))]
    return tuple(_document(rng, depth + 1) for _ in range(rng.randrange(3)))


@pytest.mark.parametrize("seed", range(300))
def test_every_non_finite_figure_is_named_in_order(seed: int) -> None:
    doc = _document(random.Random(seed))
    assert non_finite(doc) == _paths(doc)


def test_a_finite_document_is_unchanged_and_a_non_finite_one_is_warned() -> None:
    clean = {"a": [1.0, {"b": (2.0, "x")}], "c": None}
    assert json_safe(clean) is clean
    bad = {"a": [1.0, {"b": (2.0, math.nan)}], "": {"": math.inf}}
    out = json_safe(bad)
    assert [w["message"] for w in out["warnings"]] == [
        "a[1].b[1] is nan (JSON shows null)", "value is inf (JSON shows null)"]
    assert '"b": [\n        2.0,\n        null\n      ]' in to_json(bad)


def test_a_bare_non_finite_value() -> None:
    assert non_finite(-math.inf) == ["value is -inf"]
    assert non_finite(1.0) == []
