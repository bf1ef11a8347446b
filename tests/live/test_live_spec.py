"""Every request lbctl sent to the test cluster — across export, monitor, live recommend, unload and
split, redirects included — is one of the admin v2 operations lbctl knows (tests/spec_paths.py, checked against the official
OpenAPI spec there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.admin.auth import make_auth
from lbctl.admin.client import AdminClient
from lbctl.executor import Executor, split_mutation
from tests.live.live_helpers import ADMIN_TOKEN, Lbctl
from tests.spec_paths import defined

pytestmark = [pytest.mark.live]


def test_every_request_sent_is_in_the_spec(lbctl: Lbctl, tmp_path: Path) -> None:
    c = lbctl.cluster
    # partitioned topics: the topic-list capture asks for each one's partitions too
    c.partitioned = {"persistent://public/default/p": 2, "non-persistent://public/default/q": 2}
    assert lbctl("snapshot", "export", "-f", str(tmp_path / "s.json")).exit_code == 0
    assert lbctl("monitor-brokers", "--once").exit_code == 0
    assert lbctl("recommend").exit_code == 0
    assert lbctl("brokers").exit_code == 0
    rng = c.ranges("public/default")[1]
    dest = list(c.brokers)[2]
    assert lbctl("unload", "public/default", "-b", rng, "-d", dest, "--yes").exit_code == 0
    assert lbctl("unload", "tenant-a/orders", "--yes").exit_code == 0
    with AdminClient(c.admin_url, auth=make_auth("token", f"token:{ADMIN_TOKEN}")) as client:
        Executor(client, yes=True, show=lambda _: None, journal=tmp_path / "j").run(
            [split_mutation("public/default", c.ranges("public/default")[1], unload=True)])
    seen = {(r.method, r.path) for r in c.log}
    assert len(seen) >= 10
    undefined = sorted(x for x in seen if not defined(*x))
    assert not undefined
