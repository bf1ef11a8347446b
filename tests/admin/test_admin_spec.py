"""Every endpoint lbctl may request is one of the admin v2 operations it knows (tests/spec_paths.py),
and that list is the official spec's (checked when LBCTL_ADMIN_SPEC names a copy of it)."""

from __future__ import annotations

import pytest

from lbctl.admin.client import ENDPOINTS, split_call, unload_call
from lbctl.sources.live_brokers import ENDPOINTS as BROKER_ENDPOINTS
from tests.spec_paths import BASE, OPERATIONS, SKIP_REASON, SPEC, defined, spec_templates, templates

ALL = (*ENDPOINTS, *BROKER_ENDPOINTS)


@pytest.mark.parametrize("ep", ALL, ids=lambda e: f"{e.method} {e.template}")
def test_endpoint_is_a_known_operation(ep) -> None:
    assert (ep.method, ep.template) in templates()


def test_every_known_operation_is_used() -> None:
    assert {(e.method, e.template) for e in ALL} == set(OPERATIONS)


def test_concrete_mutation_paths_match() -> None:
    for c in (unload_call("public/default"), unload_call("public/default", "0x00000000_0x40000000",
                                                         "b:8080"),
              split_call("public/default", "0x00000000_0x40000000", unload=True,
                         algorithm="specified_positions_divide", boundaries=[1])):
        assert defined(c.method, c.path), c.path


def test_the_checker_can_fail() -> None:
    assert not defined("GET", "/admin/v2/namespaces/public/default/0x00000000_0x40000000/unload")
    assert not defined("PUT", "/admin/v2/brokers/nope/extra/segments/here")
    assert not defined("DELETE", "/admin/v2/tenants")


@pytest.mark.skipif(SPEC is None, reason=SKIP_REASON)
def test_operations_are_in_the_official_spec() -> None:
    assert SPEC is not None and SPEC.is_file(), f"{SPEC} is not a file"
    admin = {op for op in OPERATIONS if op[1].startswith(BASE + "/")}
    missing = sorted(admin - spec_templates(SPEC))
    assert not missing, f"not in {SPEC.name}: {missing}"
