"""YAML snapshots: bounded reading (depth, aliases, repeated keys) and writing.

Imported only when a ``.yaml``/``.yml`` snapshot is read or written (PyYAML costs start-up time a
JSON command does not need). What is refused and why: :mod:`lbctl.sources.snapshot`.
"""

from __future__ import annotations

from typing import Any

import yaml

from lbctl.errors import SnapshotError
from lbctl.sources.snapshot_text import DuplicateKey as _DuplicateKey
from lbctl.sources.snapshot_text import decode_error as _decode_error
from lbctl.sources.snapshot_text import one_line as _one_line

__all__ = ["MAX_YAML_DEPTH", "MAX_YAML_NODES", "dump_yaml", "load_yaml"]

_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_yaml(obj: Any) -> bytes:
    """A snapshot document as YAML (UTF-8), keys in the document's order."""
    text = yaml.dump(obj, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True)
    return text.encode("utf-8")


#: nesting depth of a YAML document (a snapshot needs about 8): libyaml builds nodes recursively
#: and crashes the interpreter (a C stack overflow) on tens of thousands of levels
MAX_YAML_DEPTH = 64
#: nodes a YAML document may expand to through aliases (``*ref``): a few anchors referring to
#: each other can stand for billions of nodes ("billion laughs")
MAX_YAML_NODES = 10_000_000


def load_yaml(name: str, data: bytes) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _decode_error(name, data, "YAML", "", 0, 0) from None
    try:
        _check_yaml_shape(name, text)
        return yaml.load(text, Loader=_StrictYamlLoader)  # a safe loader: plain data only
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = e.problem or e.context or "syntax error"
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        if "nesting depth" in problem:  # PyYAML >= 6.0.3's own limit, met before lbctl's
            raise SnapshotError(f"{name}: YAML nested deeper than {MAX_YAML_DEPTH} levels"
                                f"{where}") from None
        raise SnapshotError(f"{name}: not valid YAML: {_one_line(problem)}{where}") from None
    except yaml.YAMLError as e:
        raise SnapshotError(f"{name}: not valid YAML: {_one_line(str(e))}") from None
    except ValueError as e:  # e.g. an integer of more than 4,300 digits (int() refuses it)
        raise SnapshotError(f"{name}: not a usable YAML value: {_one_line(str(e))[:200]}") from None
    except RecursionError:
        raise SnapshotError(f"{name}: YAML nested too deeply") from None
    except _DuplicateKey as e:
        raise SnapshotError(f"{name}: the key {_one_line(e.key)[:80]!r} appears twice in one "
                            f"mapping{e.path}; a duplicate key would silently replace the first "
                            "value") from None


def _check_yaml_shape(name: str, text: str) -> None:
    """Walk the YAML events (libyaml's parser is iterative) before anything is built: refuse
    nesting deeper than :data:`MAX_YAML_DEPTH`, an alias to a collection it is inside of (a
    self-referencing structure), and aliases expanding past :data:`MAX_YAML_NODES` nodes."""
    loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    starts = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    ends = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    stack: list[list[Any]] = []  # [anchor, nodes so far, mark]
    anchored: dict[str, int] = {}
    total = 0

    def where(event: Any) -> str:
        mark = event.start_mark
        return f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""

    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, starts):
            if len(stack) >= MAX_YAML_DEPTH:
                raise SnapshotError(f"{name}: YAML nested deeper than {MAX_YAML_DEPTH} levels"
                                    f"{where(event)}")
            stack.append([event.anchor, 1])
        elif isinstance(event, ends):
            anchor, nodes = stack.pop()
            if anchor is not None:
                anchored[anchor] = nodes
            if stack:
                stack[-1][1] += nodes
        elif isinstance(event, yaml.AliasEvent):
            if any(frame[0] == event.anchor for frame in stack):
                raise SnapshotError(f"{name}: YAML alias *{_one_line(str(event.anchor))[:80]} "
                                    f"refers to a collection that contains it{where(event)}")
            nodes = anchored.get(event.anchor or "", 1)
            total += nodes
            if stack:
                stack[-1][1] += nodes
        elif isinstance(event, yaml.ScalarEvent):
            if event.anchor is not None:
                anchored[event.anchor] = 1
            total += 1
            if stack:
                stack[-1][1] += 1
        if total > MAX_YAML_NODES or (stack and stack[0][1] > MAX_YAML_NODES):
            raise SnapshotError(f"{name}: YAML aliases expand to more than {MAX_YAML_NODES:,} "
                                f"nodes{where(event)}")


class _StrictYamlLoader(_YAML_LOADER):  # type: ignore[misc]  # libyaml's or pure-Python
    """The safe loader, refusing a mapping with a key twice (the last value would win silently:
    two reports of one broker id, one of them lost)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key = key_node.value
                if key in seen:
                    mark = key_node.start_mark
                    raise _DuplicateKey(str(key), f" (line {mark.line + 1}, column "
                                                  f"{mark.column + 1})")
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


