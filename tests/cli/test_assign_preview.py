"""`lbctl assign-preview` end to end on snapshot files: every output format, one-line refusals."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import yaml

from lbctl.cli.app import app
from tests.paths import EXAMPLES

DATA = Path(__file__).resolve().parents[1] / "data"
TWO = ["--snapshot", str(DATA / "assign" / "two-brokers.json")]


def test_json_is_the_lookups_in_order(runner) -> None:  # type: ignore[no-untyped-def]
    res = runner.invoke(app, ["assign-preview", "--namespace", "acme/new", "--bundles", "4",
                              *TWO, "-o", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["format"] == "lbctl/assign-preview@1"
    assert data["request"] == {"kind": "namespace", "subject": "acme/new"}
    assert (data["loadManager"], data["placement"]) == ("modular", "LeastLongTermMessageRate")
    assert [a["broker"] for a in data["assignments"]] == ["b2:8080", "b2:8080", "b1:8080",
                                                         "b2:8080"]
    assert data["perBroker"] == {"b2:8080": 3, "b1:8080": 1}
    assert data["pulsarVersion"]
    again = yaml.safe_load(runner.invoke(app, ["assign-preview", "--namespace", "acme/new",
                                               "--bundles", "4", *TWO, "-o", "yaml"]).stdout)
    assert again == data


def test_csv_rows_and_the_table(runner) -> None:  # type: ignore[no-untyped-def]
    res = runner.invoke(app, ["assign-preview", "--broker-stopped", "broker-2.pulsar.svc:8080",
                              "--snapshot", str(EXAMPLES / "hot-broker.json"), "-o", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert rows and list(rows[0]) == ["bundle", "broker", "owned", "candidates", "score", "why"]
    assert all(r["broker"] and r["broker"] != "broker-2.pulsar.svc:8080" for r in rows)
    table = runner.invoke(app, ["assign-preview", "--topic", "persistent://acme/busy/t", *TWO])
    assert table.exit_code == 0, table.output
    assert "acme/busy/0x00000000_0xffffffff" in table.stdout and "(owner)" in table.stdout
    assert "Preview only: nothing was changed." in table.stdout


def test_refusals_are_one_line(runner) -> None:  # type: ignore[no-untyped-def]
    for args, words in (
        (["--namespace", "a/b", "--topic", "persistent://a/b/c"], "exactly one of"),
        ([], "exactly one of"),
        (["--broker-stopped", "x:1", "--bundles", "2"], "--bundles goes with --namespace"),
        (["--namespace", "acme/busy", "--bundles", "2"], "exists with 1 bundles"),
        (["--broker-stopped", "nope:8080"], "not an active broker"),
        (["--namespace", "bad"], "namespace"),
    ):
        res = runner.invoke(app, ["assign-preview", *args, *TWO])
        assert res.exit_code == 2, (args, res.output)
        assert words in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_a_simple_cluster_spreads_a_new_namespace(runner) -> None:  # type: ignore[no-untyped-def]
    """SimpleLoadManagerImpl: the even spread of the namespace's bundles decides first, then
    findBrokerForPlacement; a lone candidate above the overload threshold is still taken (it has
    the most room left of one)."""
    res = runner.invoke(app, ["assign-preview", "--namespace", "acme/new", "--bundles", "6",
                              "--snapshot", str(EXAMPLES / "simple-overloaded.json"), "-o", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["loadManager"], data["placement"]) == ("simple", "leastLoadedServer")
    short = [a["broker"].split(".")[0] for a in data["assignments"]]
    assert short == ["broker-3", "broker-2", "broker-1", "broker-3", "broker-2", "broker-1"]
    assert data["perBroker"] == {"broker-3.pulsar.svc:8080": 2, "broker-2.pulsar.svc:8080": 2,
                                 "broker-1.pulsar.svc:8080": 2}


def test_the_why_names_brokers_as_the_table_does(runner) -> None:  # type: ignore[no-untyped-def]
    """The page's first command at 80 columns: the why column kept the full ids the note says are
    shortened, and its 24-character words cut the 'candidates' header in two ('candidate' / 's')."""
    res = runner.invoke(app, ["assign-preview", "--namespace", "acme/new-ns", "--bundles", "8",
                              "--snapshot", str(EXAMPLES / "hot-broker.json")],
                        env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    head = next(line for line in lines if line.startswith("bundle "))
    assert head.split() == ["bundle", "broker", "candidates", "why"]
    assert max(len(line) for line in lines) <= 80
    assert ".pulsar.svc:8080" not in "\n".join(lines[:-1])  # the note, last, names the suffix
    assert "broker-2 is overloaded" in res.stdout
    assert lines[2] == "Modelled as Pulsar 4.0.4 (snapshot)"  # the origin too, as recommend says
