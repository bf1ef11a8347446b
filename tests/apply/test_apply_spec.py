"""Every request apply, drain (pause, restore) and the verification lookups send is one of the
admin v2 / lookup v2 operations lbctl knows (tests/spec_paths.py, checked against Pulsar's
published spec by tests/admin/test_admin_spec.py); the operations apply added are listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.admin.client import ENDPOINTS
from lbctl.sandbox import TestCluster
from tests.apply.apply_helpers import lbctl, plan_doc, spread_moves, write_plan
from tests.spec_paths import APPLY_OPERATIONS, defined, templates

pytestmark = pytest.mark.live


def test_apply_operations_are_in_the_specs_and_declared() -> None:
    assert set(APPLY_OPERATIONS) <= templates()
    declared = {(e.method, e.template) for e in ENDPOINTS}
    assert set(APPLY_OPERATIONS) <= declared


def test_every_request_of_apply_and_drain_is_in_the_specs(cluster: TestCluster,
                                                          tmp_path: Path) -> None:
    c = cluster
    plan = write_plan(tmp_path / "plan.json", plan_doc(c, spread_moves(c, 3)))
    assert lbctl(c, "apply", str(plan), "--yes").exit_code == 0
    r = lbctl(c, "drain", list(c.brokers)[1], "--pause-balancer", "--keep-paused", "--yes",
              "-m", "0")
    assert r.exit_code == 0, r.stderr
    assert lbctl(c, "drain", "--restore", "--yes").exit_code == 0
    seen = {(x.method, x.path) for x in c.log}
    assert any(p.startswith("/lookup/v2/topic/") for _, p in seen)
    assert any(m == "DELETE" for m, _ in seen) and any(m == "POST" for m, _ in seen)
    assert any(p.endswith("/ownedNamespaces") for _, p in seen)
    assert not sorted(x for x in seen if not defined(*x))
