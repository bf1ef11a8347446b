"""`lbctl unload` and the executor's split path against the loopback test cluster: redirects with
the token kept, validation before any change, dry runs, confirmation and the journal."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lbctl.admin.auth import make_auth
from lbctl.admin.client import AdminClient
from lbctl.executor import Executor, check_bundle, parse_range, split_mutation
from lbctl.sandbox import TestCluster
from tests.live.live_helpers import ADMIN_TOKEN, Lbctl, assert_no_secret

pytestmark = pytest.mark.live


def _bundle_not_on_admin_broker(c: TestCluster) -> tuple[str, str]:
    admin = next(iter(c.brokers))
    bundle = next(b for b, o in c.owners.items() if o != admin and b.startswith("public/default"))
    return bundle, c.owners[bundle]


def _puts(c: TestCluster) -> list:
    return c.requests("PUT")


def test_unload_through_redirect_keeps_the_token(lbctl: Lbctl, tmp_path: Path) -> None:
    c = lbctl.cluster
    bundle, owner = _bundle_not_on_admin_broker(c)
    dest = next(b for b in c.brokers if b != owner)
    res = lbctl("unload", "public/default", "-b", bundle.rsplit("/", 1)[1], "-d", dest, "--yes")
    assert res.exit_code == 0, res.stderr
    assert c.owners[bundle] == dest
    puts = _puts(c)
    assert [r.status for r in puts] == [307, 204]
    assert puts[0].broker == c.admin_url.removeprefix("http://") and puts[1].broker == owner
    assert all(r.authorization == f"Bearer {ADMIN_TOKEN}" for r in puts)
    assert puts[1].query == {"destinationBroker": dest}
    assert "PUT http://" in res.stdout and "/unload?destinationBroker=" in res.stdout
    journal = [json.loads(x) for x in Path(os.environ["LBCTL_JOURNAL"]).read_text().splitlines()]
    assert [j["state"] for j in journal] == ["sending", "done"]
    assert journal[1]["status"] == 204 and "destinationBroker" in journal[1]["url"]
    assert_no_secret(res.stdout, res.stderr, Path(os.environ["LBCTL_JOURNAL"]).read_text())


def test_unload_whole_namespace(lbctl: Lbctl) -> None:
    before = dict(lbctl.cluster.owners)
    res = lbctl("unload", "tenant-a/orders", "--yes", "-o", "json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["requests"][0]["state"] == "done" and doc["requests"][0]["status"] == 204
    moved = [b for b in before if b.startswith("tenant-a/") and before[b] != lbctl.cluster.owners[b]]
    assert len(moved) == 4


def test_dry_run_sends_no_mutation(lbctl: Lbctl) -> None:
    c = lbctl.cluster
    bundle, owner = _bundle_not_on_admin_broker(c)
    res = lbctl("unload", "public/default", "-b", bundle.rsplit("/", 1)[1], "--dry-run")
    assert res.exit_code == 0, res.stderr
    assert "dry run: nothing was sent" in res.stdout
    assert f"PUT {c.admin_url}/admin/v2/namespaces/public/default/" in res.stdout
    assert not _puts(c) and c.owners[bundle] == owner
    assert c.requests("GET", "/bundles$")  # the validation did run
    assert not Path(os.environ["LBCTL_JOURNAL"]).exists()


def test_no_terminal_and_no_yes_refuses(lbctl: Lbctl) -> None:
    res = lbctl("unload", "tenant-a/orders")
    assert res.exit_code == 12
    assert "refusing to change the cluster without confirmation" in res.stderr
    assert not _puts(lbctl.cluster)


def test_destination_needs_bundle(lbctl: Lbctl) -> None:
    res = lbctl("unload", "public/default", "-d", "127.0.0.1:1")
    assert res.exit_code == 2
    assert res.stderr == ("lbctl: error: --destinationBroker cannot be set when --bundle is not "
                          "specified.\n")
    assert not lbctl.cluster.log


def test_unknown_bundle_and_inactive_destination_are_refused_before_any_change(lbctl: Lbctl) -> None:
    c = lbctl.cluster
    res = lbctl("unload", "public/default", "-b", "0x00000000_0x10000000", "--yes")
    assert res.exit_code == 2 and "public/default has no bundle 0x00000000_0x10000000" in res.stderr
    rng = c.ranges("public/default")[0]
    res = lbctl("unload", "public/default", "-b", rng, "-d", "10.0.0.9:8080", "--yes")
    assert res.exit_code == 2 and "is not an active broker" in res.stderr
    assert not _puts(c)


def test_split_through_redirect_changes_boundaries(cluster: TestCluster, tmp_path: Path) -> None:
    bundle, owner = _bundle_not_on_admin_broker(cluster)
    ns, rng = bundle.rsplit("/", 1)
    lo, hi = (int(x, 16) for x in rng.split("_"))
    cut = lo + (hi - lo) // 4
    shown: list[str] = []
    with AdminClient(cluster.admin_url, auth=make_auth("token", f"token:{ADMIN_TOKEN}")) as client:
        check_bundle(client, ns, parse_range(ns, rng))
        m = split_mutation(ns, rng, unload=False, algorithm="specified_positions_divide",
                           boundaries=[cut])
        out = Executor(client, yes=True, show=shown.append, journal=tmp_path / "j.jsonl").run([m])
    assert out[0].state == "done"
    assert lo in cluster.namespaces[ns] and cut in cluster.namespaces[ns]
    assert f"{ns}/0x{lo:08x}_0x{cut:08x}" in cluster.owners
    puts = cluster.requests("PUT")
    assert [r.status for r in puts] == [307, 204] and puts[1].broker == owner
    assert all(r.authorization == f"Bearer {ADMIN_TOKEN}" for r in puts)
    assert puts[1].body == f"[{cut}]".encode()
    assert puts[1].query == {"unload": "false", "splitAlgorithmName": "specified_positions_divide"}
    assert any(f"body: [{cut}]" in s for s in shown)


def test_split_range_equally_with_unload(cluster: TestCluster, tmp_path: Path) -> None:
    bundle, owner = _bundle_not_on_admin_broker(cluster)
    ns, rng = bundle.rsplit("/", 1)
    n = len(cluster.namespaces[ns])
    with AdminClient(cluster.admin_url, auth=make_auth("token", f"token:{ADMIN_TOKEN}")) as client:
        Executor(client, yes=True, show=lambda _: None, journal=tmp_path / "j.jsonl").run(
            [split_mutation(ns, rng, unload=True, algorithm="range_equally_divide")])
    assert len(cluster.namespaces[ns]) == n + 1
    assert cluster.requests("PUT")[-1].body == b""


def test_split_bundle_command_live_previews_then_splits(lbctl: Lbctl) -> None:
    """`lbctl split-bundle` on a live cluster: the preview, the exact request, then the split,
    sent to the admin broker and redirected to the owner with the token kept."""
    c = lbctl.cluster
    bundle, owner = _bundle_not_on_admin_broker(c)
    ns, rng = bundle.rsplit("/", 1)
    lo, hi = (int(x, 16) for x in rng.split("_"))
    res = lbctl("split-bundle", ns, "-b", rng, "--yes")
    assert res.exit_code == 0, res.stderr
    mid = lo + (hi - lo) // 2
    assert f"0x{mid:08x}" in res.stdout  # the preview's boundary
    assert f"/{rng}/split" in res.stdout  # the request, shown before it is sent
    assert f"{ns}/0x{lo:08x}_0x{mid:08x}" in c.owners
    puts = c.requests("PUT")
    assert [r.status for r in puts] == [307, 204] and puts[1].broker == owner
    assert all(r.authorization == f"Bearer {ADMIN_TOKEN}" for r in puts)
    assert_no_secret(res.stdout, res.stderr)


def test_split_bundle_command_dry_run_sends_nothing(lbctl: Lbctl) -> None:
    c = lbctl.cluster
    bundle, _ = _bundle_not_on_admin_broker(c)
    ns, rng = bundle.rsplit("/", 1)
    before = list(c.namespaces[ns])
    res = lbctl("split-bundle", ns, "-b", rng, "-san", "specified_positions_divide",
                "-sb", hex(int(rng.split("_")[0], 16) + 16), "--dry-run", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert not _puts(c) and c.namespaces[ns] == before
    assert json.loads(res.stdout)["requests"][0]["state"] == "dry-run"


def test_split_bundle_command_without_confirmation_refuses(lbctl: Lbctl) -> None:
    c = lbctl.cluster
    bundle, _ = _bundle_not_on_admin_broker(c)
    ns, rng = bundle.rsplit("/", 1)
    res = lbctl("split-bundle", ns, "-b", rng)
    assert res.exit_code == 12 and not _puts(c)
