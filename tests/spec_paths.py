"""The official admin v2 OpenAPI spec, as (method, path regex) pairs, for tests that check that
every request lbctl sends is one the spec defines. The spec lives next to the repository in
``../shared/spec``; tests skip with a reason when it is absent."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared" / "spec" / "pulsar-admin-v2-swagger-4.1.1.json"
SKIP_REASON = f"the admin v2 OpenAPI spec is not at {SPEC} (../shared/spec relative to the repo)"


@lru_cache(maxsize=1)
def operations() -> list[tuple[str, str, re.Pattern[str]]]:
    """(METHOD, template with basePath, regex of a concrete path) for every spec operation."""
    doc = json.loads(SPEC.read_text(encoding="utf-8"))
    base = doc.get("basePath", "")
    ops = []
    for template, item in doc["paths"].items():
        full = base + template
        rx = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(full)) + "$")
        for method in item:
            if method in ("get", "put", "post", "delete", "patch", "head", "options"):
                ops.append((method.upper(), full, rx))
    return ops


def templates() -> set[tuple[str, str]]:
    return {(m, t) for m, t, _ in operations()}


def defined(method: str, path: str) -> bool:
    """True when the spec has an operation for this method and concrete path."""
    return any(m == method and rx.match(path) for m, _, rx in operations())
