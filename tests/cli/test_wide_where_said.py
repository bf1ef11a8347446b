"""Every command whose table says "--wide" takes --wide: propose, drain and rebalance-after printed
"(common suffix … left out of broker names; --wide: full names)" and then refused --wide ("No
such option"). rebalance-after's "Why these moves" names brokers as its table does."""

from __future__ import annotations

import pytest

from lbctl.cli.app import app
from tests.paths import EXAMPLES

ROLLING = str(EXAMPLES / "rolling-restart.yaml")
HOT = str(EXAMPLES / "hot-broker.json")
CASES = {
    "propose": ["propose", HOT, "--solver", "greedy"],
    "rebalance-after": ["rebalance-after", "broker-6.pulsar.svc:8080", "--snapshot", ROLLING],
    "drain": ["drain", "broker-2.pulsar.svc:8080", "--snapshot", ROLLING],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_wide_is_taken_where_the_output_points_to_it(runner, name: str) -> None:
    args = CASES[name]
    narrow = runner.invoke(app, args, env={"COLUMNS": "80"})
    assert narrow.exit_code == 0, narrow.stderr
    assert "--wide" in narrow.stdout
    wide = runner.invoke(app, [*args, "--wide", "--no-color"], env={"COLUMNS": "80"})
    assert wide.exit_code == 0, wide.stderr
    assert "--wide" not in wide.stdout  # nothing left out, nothing shortened
    assert ".pulsar.svc:8080" in wide.stdout


def test_the_fill_reasons_name_brokers_as_the_table(runner) -> None:
    r = runner.invoke(app, CASES["rebalance-after"], env={"COLUMNS": "80"})
    why = r.stdout.split("Why these moves", 1)[1]
    assert "broker-6" in why and ".pulsar.svc:8080" not in why
    r = runner.invoke(app, [*CASES["rebalance-after"], "--wide"], env={"COLUMNS": "80"})
    assert "broker-6.pulsar.svc:8080" in r.stdout.split("Why these moves", 1)[1]
