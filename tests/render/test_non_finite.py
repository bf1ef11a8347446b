"""Non-finite figures in JSON output: every one is named with its path, once (lbctl.render)."""

from __future__ import annotations

import io
import math
import random
from contextlib import redirect_stderr
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


def _old_to_json(data: Any, option: int) -> str:
    """The encoding before the finite fast path: walk first, then encode what the walk gave
    (hidden characters escaped, as all JSON output has them since hostile21)."""
    import orjson

    from lbctl.render import _json_ready
    from lbctl.safe.text import json_hidden_escaped

    return json_hidden_escaped(orjson.dumps(_json_ready(data), option=option)).decode()


_LEAVES = st.one_of(
    st.floats(),  # NaN and ±inf among them
    st.integers(-(2**63), 2**63 - 1), st.booleans(), st.none(),
    st.text(max_size=6), st.sampled_from(["null", "a null", "nullable"]),
)
_DOCS = st.recursive(_LEAVES, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.lists(inner, max_size=3).map(tuple),
    st.dictionaries(st.one_of(st.text(max_size=5), st.sampled_from(["null", "x"])), inner,
                    max_size=4),
    st.dictionaries(st.integers(-5, 5), inner, max_size=3),
), max_leaves=15)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(_DOCS)
def test_the_finite_fast_path_writes_what_the_walk_first_path_wrote(doc: Any) -> None:
    """lbctl.render._dumps skips the walk when orjson's text holds no ``null``: the same text
    and the same stderr warning as walking first, for documents with and without non-finite
    figures, ``None`` values and ``"null"`` inside strings and keys."""
    import orjson

    from lbctl.render import to_json, to_json_line

    for new, option in ((to_json, orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS),
                        (to_json_line, orjson.OPT_NON_STR_KEYS)):
        err_old, err_new = io.StringIO(), io.StringIO()
        with redirect_stderr(err_old):
            old = _old_to_json(doc, option)
        with redirect_stderr(err_new):
            assert new(doc) == old
        assert err_new.getvalue() == err_old.getvalue()


def test_a_non_finite_figure_still_takes_the_walk() -> None:
    """The case the fast path must not miss: a NaN shows as ``null`` and is named, once."""
    err = io.StringIO()
    with redirect_stderr(err):
        text = to_json({"a": [1.0, math.nan], "b": "null"})
    assert '"a[1] is nan (JSON shows null)"' in text
    assert err.getvalue().count("1 figure(s) are not finite") == 1
