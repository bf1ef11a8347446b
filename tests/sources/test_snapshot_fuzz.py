"""Issue 12's fuzz test: hostile snapshots — mutated valid ones, odd values in every field, raw
bytes, YAML — through the reader and on into the load managers (recommend's pipeline and plan
rendering). Every input ends in a plan or in one clean ``LbctlError`` line; never in another
exception. Deterministic (``derandomize``) so that CI always runs the same 2,000+ examples."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lbctl.errors import LbctlError
from lbctl.loadmanager.select import Options, run
from lbctl.render import render
from lbctl.render.views import ExplainView, RecommendView
from lbctl.sources.snapshot import _read_snapshot_file

DATA = Path(__file__).parent.parent / "data" / "valid"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
BASES = [json.loads((DATA / n).read_text()) for n in ("minimal.json", "full.json", "extensible.json")]
BASES.append(json.loads((EXAMPLES / "hot-broker.json").read_text()))

pytestmark = pytest.mark.slow

# values a field may be replaced with: the types JSON/YAML give, at their edges
scalars = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12),
    st.sampled_from([0, -1, 0.0, 1e-300, 2**31, 2**63, 1.5, "", "0x00000000", "NaN",
                     "public/default/0x00000000_0x40000000", "b:1", "\x1b[2J", "a/b",
                     "2026-11-21T22:00:00Z", "9999-12-31T23:59:59Z", "x" * 300]),
    st.text(max_size=20),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=8)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    base = json.loads(json.dumps(draw(st.sampled_from(BASES))))
    paths = _paths(base)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(paths))
        if not path:
            continue
        parent = base
        try:
            for key in path[:-1]:
                parent = parent[key]
            action = draw(st.sampled_from(["replace", "delete", "copy-key"]))
            if action == "delete" and isinstance(parent, dict):
                parent.pop(path[-1], None)
            elif action == "copy-key" and isinstance(parent, dict):
                parent[draw(st.text(max_size=12))] = parent.get(path[-1])
            else:
                parent[path[-1]] = draw(values)
        except (KeyError, IndexError, TypeError):
            continue
    return base


def _check(data: bytes, name: str, tmp: Path) -> None:
    f = tmp / name
    f.write_bytes(data)
    try:
        states = _read_snapshot_file(f)
        results = run(states, Options())
        out = io.StringIO()
        view = RecommendView([r.plan() for r in results], True)
        for fmt in ("json", "table", "csv"):
            render(view, fmt, out)
        render(ExplainView(results, None, None, False), "table", out)
    except LbctlError as e:
        text = str(e)
        assert text and "\n" not in text.strip(), repr(text)


FUZZ = settings(max_examples=1500, derandomize=True, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


@FUZZ
@given(snap=mutated(), kind=st.sampled_from(["json", "yaml", "jsonl"]))
def test_mutated_snapshots_end_in_a_plan_or_one_line(tmp_path: Path, snap: Any, kind: str) -> None:
    if kind == "yaml":
        data = yaml.safe_dump(snap, allow_unicode=True).encode()
    else:
        data = json.dumps(snap, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if kind == "jsonl":
        data = data + b"\n" + data + b"\n"
    _check(data, f"s.{kind}", tmp_path)


@settings(max_examples=600, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(raw=st.one_of(st.binary(max_size=200),
                     st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
                     st.sampled_from([b"\x1f\x8b" + b"\x00" * 20, b"[" * 5000, b"&a [*a]",
                                      b"a: &a\n  b: *a\n", b"- " * 3000, b"\xef\xbb\xbf{}",
                                      b'{"format": "lbctl/snapshot@1", "brokers": {}}'])),
       kind=st.sampled_from(["json", "yaml", "jsonl", "json.gz"]))
def test_raw_bytes_end_in_one_line(tmp_path: Path, raw: bytes, kind: str) -> None:
    _check(raw, f"r.{kind}", tmp_path)
