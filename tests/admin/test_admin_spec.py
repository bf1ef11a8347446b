"""Every endpoint lbctl may request is a path and method of the official admin v2 OpenAPI spec."""

from __future__ import annotations

import pytest
from spec_paths import SKIP_REASON, SPEC, defined, templates

from lbctl.admin.client import ENDPOINTS, split_call, unload_call

pytestmark = pytest.mark.skipif(not SPEC.is_file(), reason=SKIP_REASON)


@pytest.mark.parametrize("ep", ENDPOINTS, ids=lambda e: f"{e.method} {e.template}")
def test_endpoint_is_in_the_spec(ep) -> None:
    assert (ep.method, ep.template) in templates()


def test_concrete_mutation_paths_match_the_spec() -> None:
    for c in (unload_call("public/default"), unload_call("public/default", "0x00000000_0x40000000",
                                                         "b:8080"),
              split_call("public/default", "0x00000000_0x40000000", unload=True,
                         algorithm="specified_positions_divide", boundaries=[1])):
        assert defined(c.method, c.path), c.path


def test_the_checker_can_fail() -> None:
    assert not defined("GET", "/admin/v2/namespaces/public/default/0x00000000_0x40000000/unload")
    assert not defined("PUT", "/admin/v2/brokers/nope/extra/segments/here")
