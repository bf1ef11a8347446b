"""A live read is never called a snapshot: outputs and errors of commands run on the loopback
cluster name it "the cluster" (the one note that says no snapshot file was given aside)."""

from __future__ import annotations

import pytest

from tests.live.live_helpers import Lbctl

pytestmark = pytest.mark.live

NOTE = "lbctl: no snapshot given: reading the live cluster at"  # why it reads live: documented

COMMANDS = [
    ("recommend",), ("explain",), ("explain", "--broker", "nope"),
    ("explain", "--bundle", "public/default/0x00000000_0x00000001"),
    ("split-bundle", "public/nope", "-bt", "LARGEST", "--dry-run"),
    ("split-bundle", "tenant-a/orders", "-bt", "LARGEST", "--dry-run"),
    ("split-bundle", "public/default", "-bt", "HOT", "-san", "range_equally_divide", "--dry-run"),
    ("propose", "--solver", "greedy"), ("monitor-brokers", "--once"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_no_snapshot_in_what_a_live_command_says(lbctl: Lbctl, args: tuple[str, ...]) -> None:
    res = lbctl(*args)
    said = [ln for ln in (res.stdout + res.stderr).splitlines() if not ln.startswith(NOTE)]
    assert said, "the command said nothing"
    assert not [ln for ln in said if "snapshot" in ln.lower()], said


def test_the_release_modelled_is_named_from_the_cluster(lbctl: Lbctl) -> None:
    res = lbctl("recommend")
    assert res.exit_code == 0, res.stderr
    assert "Modelled as Pulsar " in res.stdout and " (cluster)" in res.stdout
