"""No strategy words its decisions: ``lbctl/strategies`` returns codes and figures
(:class:`~lbctl.model.decision.Why` records) and :mod:`lbctl.explain.words` writes the sentences.

The check reads each module's syntax tree: a sentence is built with an f-string, ``str.format``,
``%`` or ``str.join``, or written as a literal with spaces; each is allowed only inside a
``raise`` (an error message) and in the registry (registration: qualified names and the
unknown-name error). A literal with spaces may also be a name: a step's (like the names of
Pulsar's filters) or a code's (a value of a ``Literal`` code type, like a TransferShedder round's
outcome "no load data"). And no strategy imports lbctl's formatting helpers (``lbctl.units``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STRATEGIES = ROOT / "lbctl" / "strategies"
#: registration and its errors (qualified class names, "did you mean …")
REGISTRATION = {STRATEGIES / "registry.py"}
#: literals with spaces that are names, not sentences
LABELS = {"anti-affinity group"}


def _modules() -> list[Path]:
    return sorted(STRATEGIES.rglob("*.py"))


def _codes() -> set[str]:
    """Every value of a ``Literal`` code type of the strategies and the decision records."""
    out: set[str] = set()
    for path in (*_modules(), ROOT / "lbctl" / "model" / "decision.py"):
        for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name)
                    and n.value.id == "Literal"):
                values = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
                out |= {v.value for v in values if isinstance(v, ast.Constant)}
    return out


CODES = _codes()


def _docstrings(tree: ast.AST) -> set[ast.AST]:
    out: set[ast.AST] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = n.body[0] if n.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(first.value)
    return out


def _in_raise(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.Raise):
            return True
    return False


def _builds_text(n: ast.AST) -> bool:
    if isinstance(n, ast.JoinedStr):
        return True
    if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("join", "format") and isinstance(n.func.value, ast.Constant)):
        return True
    return (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod)
            and isinstance(n.left, ast.Constant) and isinstance(n.left.value, str))


def _prose(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    docs = _docstrings(tree)
    found = []
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module == "lbctl.units":
            found.append(f"{path.name}:{n.lineno}: imports lbctl.units")
        if path in REGISTRATION or _in_raise(n, parents):
            continue
        if _builds_text(n):
            found.append(f"{path.name}:{getattr(n, 'lineno', '?')}: builds text")
        elif (isinstance(n, ast.Constant) and isinstance(n.value, str) and " " in n.value
              and n not in docs and n.value not in LABELS | CODES
              and not isinstance(parents.get(n), ast.JoinedStr | ast.Attribute | ast.BinOp)):
            found.append(f"{path.name}:{n.lineno}: literal {n.value[:40]!r}")
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(STRATEGIES)))
def test_no_strategy_builds_prose(path: Path) -> None:
    assert _prose(path) == []


def test_the_check_sees_prose(tmp_path: Path) -> None:
    """The check itself: each way of building a sentence is found, an error message is not."""
    bad = tmp_path / "bad.py"
    bad.write_text('"""Doc string with spaces."""\n'
                   'from lbctl.units import pct\n'
                   'a = f"usage {1}"\n'
                   'b = ", ".join(["x"])\n'
                   'c = "%s" % 1\n'
                   'd = "no candidate brokers"\n'
                   'def f():\n'
                   '    raise ValueError(f"bad {1}: " + ", ".join(["x"]))\n', encoding="utf-8")
    assert [x.split(": ", 1)[1] for x in _prose(bad)] == [
        "imports lbctl.units", "builds text", "builds text", "builds text",
        "literal 'no candidate brokers'"]
