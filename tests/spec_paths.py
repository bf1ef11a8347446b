"""The admin REST operations lbctl may send, in the project's own form, and a checker.

:data:`OPERATIONS` lists the (method, path template) pairs of Pulsar's admin v2 API that lbctl
uses, as Pulsar 4.1.1's published OpenAPI spec (``BrokersBase``, ``BrokerStatsBase``,
``NamespacesBase``, ``TenantsBase``, ``ClustersBase``) names them. Tests check that every endpoint
lbctl declares, and every request it sends to the test cluster, is one of these — always, with no
file outside the repository. When ``LBCTL_ADMIN_SPEC`` names a copy of the official spec (a
Swagger 2 JSON), ``test_operations_are_in_the_official_spec`` also checks this list against it;
without it that one test skips with its reason.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path

BASE = "/admin/v2"

#: (METHOD, path template with the base path) — what lbctl may send
OPERATIONS: tuple[tuple[str, str], ...] = tuple((m, BASE + t) for m, t in (
    ("GET", "/clusters"),
    ("GET", "/brokers"),
    ("GET", "/brokers/{cluster}"),
    ("GET", "/brokers/configuration/runtime"),
    ("GET", "/brokers/configuration/values"),
    ("GET", "/brokers/leaderBroker"),
    ("GET", "/brokers/version"),
    ("GET", "/broker-stats/load-report"),
    ("GET", "/broker-stats/topics"),
    ("GET", "/broker-stats/metrics"),
    ("GET", "/tenants"),
    ("GET", "/namespaces/{tenant}"),
    ("GET", "/namespaces/{tenant}/{namespace}/bundles"),
    ("PUT", "/namespaces/{tenant}/{namespace}/unload"),
    ("PUT", "/namespaces/{tenant}/{namespace}/{bundle}/unload"),
    ("PUT", "/namespaces/{tenant}/{namespace}/{bundle}/split"),
))

SPEC_ENV = "LBCTL_ADMIN_SPEC"
SPEC = Path(os.environ[SPEC_ENV]) if os.environ.get(SPEC_ENV) else None
SKIP_REASON = (f"set {SPEC_ENV} to a copy of Pulsar's admin v2 OpenAPI spec (swagger JSON) to "
               "check the operation list against it")


def _regex(template: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template)) + "$")


@lru_cache(maxsize=1)
def _compiled() -> list[tuple[str, str, re.Pattern[str]]]:
    return [(m, t, _regex(t)) for m, t in OPERATIONS]


def templates() -> set[tuple[str, str]]:
    return set(OPERATIONS)


def defined(method: str, path: str) -> bool:
    """True when ``method`` and the concrete ``path`` match one of :data:`OPERATIONS`."""
    return any(m == method and rx.match(path) for m, _, rx in _compiled())


def spec_templates(spec: Path) -> set[tuple[str, str]]:
    """(METHOD, basePath + template) of every operation of a Swagger 2 document."""
    doc = json.loads(spec.read_text(encoding="utf-8"))
    base = doc.get("basePath", "")
    return {(method.upper(), base + template) for template, item in doc["paths"].items()
            for method in item if method in ("get", "put", "post", "delete", "patch")}
