"""The official admin v2 and lookup v2 OpenAPI specs, as (method, path regex) pairs, for tests that
check that every request lbctl sends is one the specs define. The specs live next to the
repository in ``../shared/spec``; tests skip with a reason when they are absent.

The operations ``apply``/``drain`` added (issue 15) are listed in :data:`APPLY_OPERATIONS`: the
owned bundles of a broker, the dynamic configuration (names, values, update, delete), and the
topic lookup (lookup v2, base path ``/lookup``)."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT.parent / "shared" / "spec" / "pulsar-admin-v2-swagger-4.1.1.json"
LOOKUP_SPEC = ROOT.parent / "shared" / "spec" / "pulsar-lookup-v2-swagger-master.json"

#: (METHOD, path template with its base path) that apply and drain use
APPLY_OPERATIONS: tuple[tuple[str, str], ...] = (
    ("GET", "/admin/v2/brokers/{clusterName}/{brokerId}/ownedNamespaces"),
    ("GET", "/admin/v2/brokers/configuration"),
    ("GET", "/admin/v2/brokers/configuration/values"),
    ("POST", "/admin/v2/brokers/configuration/{configName}/{configValue}"),
    ("DELETE", "/admin/v2/brokers/configuration/{configName}"),
    ("GET", "/lookup/v2/topic/{topic-domain}/{tenant}/{namespace}/{topic}"),
)
SKIP_REASON = f"the admin v2 OpenAPI spec is not at {SPEC} (../shared/spec relative to the repo)"


@lru_cache(maxsize=1)
def operations() -> list[tuple[str, str, re.Pattern[str]]]:
    """(METHOD, template with basePath, regex of a concrete path) for every spec operation."""
    ops = []
    for spec in (SPEC, LOOKUP_SPEC):
        if not spec.is_file():
            continue
        doc = json.loads(spec.read_text(encoding="utf-8"))
        base = doc.get("basePath", "")
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
