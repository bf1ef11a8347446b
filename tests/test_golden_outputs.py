"""Every output of every bundled example, byte for byte, against stored copies.

The stored copies (``tests/data/golden/``) pin what lbctl prints for the examples in every format:
``recommend``, ``explain`` (whole, per broker, per bundle), ``simulate``, ``compare``,
``split-bundle``, ``monitor-brokers --snapshot``, ``snapshot validate`` and ``propose``, with the default
strategies and each other registered one, on an 80-column terminal (``COLUMNS=80``; every table
view must fit it: :func:`test_tables_fit_80_columns`). A refactoring must leave them untouched; a change that
means to alter an output regenerates them on purpose and shows the difference in review:

    LBCTL_UPDATE_GOLDEN=1 pytest tests/test_golden_outputs.py
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden"
FORMATS = ("table", "json", "yaml", "csv")
STREAMS = (*FORMATS, "jsonl")  # jsonl: for recommend, explain and monitor-brokers
WIDTH = 80

MODULAR = ["examples/balanced.json", "examples/hot-broker.json", "examples/rolling-restart.yaml",
           "examples/two-brokers-90-10.jsonl", "examples/uniform.json",
           "examples/avg-shedder.jsonl", "examples/flow-or-qps.json",
           "examples/pip220-12-2-1-1.json", "examples/pip364-90-10.json", "examples/policies.json",
           "tests/data/split/auto-split.json", "tests/data/valid/full.json",
           "tests/data/valid/legacy_bundle_stats.json", "tests/data/valid/sequence.jsonl"]
EXTENSIBLE = ["examples/extensible/skewed.json", "examples/extensible/pip220-12-2-1-1.jsonl",
              "examples/extensible/pip220-50x5-0.jsonl", "tests/data/valid/extensible.json"]
SEQUENCES = [f for f in MODULAR + EXTENSIBLE if f.endswith(".jsonl")]
HOT = "examples/hot-broker.json"
FLOW = "examples/flow-or-qps.json"


def _cases() -> dict[str, list[str]]:
    cases: dict[str, list[str]] = {}

    def add(args: list[str]) -> None:
        name = "_".join(re.sub(r"[^A-Za-z0-9.=-]+", "-", a).strip("-") for a in args)
        cases[name[:150]] = args

    for f in MODULAR + EXTENSIBLE:
        for fmt in STREAMS:
            add(["recommend", f, "-o", fmt])
            add(["explain", f, "-o", fmt])
            add(["monitor-brokers", "--snapshot", f, "--once", "-o", fmt])
        add(["snapshot", "validate", f, "-o", "json"])
    for f in SEQUENCES:
        for fmt in STREAMS:
            add(["recommend", f, "--all-cycles", "-o", fmt])
            add(["explain", f, "--all-cycles", "-o", fmt])
    for f in MODULAR:
        for fmt in FORMATS:
            add(["simulate", f, "--cycles", "12", "-o", fmt])
            add(["compare", f, "--cycles", "12", "--strategy", "ThresholdShedder",
                 "--strategy", "OverloadShedder", "--strategy", "UniformLoadShedder",
                 "--strategy", "AvgShedder:AvgShedder",
                 "--strategy", "ThresholdShedder:LeastResourceUsageWithWeight", "-o", fmt])
    for f in EXTENSIBLE:  # the extensible load manager in the simulator's loop
        for fmt in FORMATS:
            add(["simulate", f, "--cycles", "12", "-o", fmt])
            add(["compare", f, "--cycles", "12", "--strategy", "TransferShedder",
                 "--strategy", "ThresholdShedder", "-o", fmt])
    strategies = [["--strategy", "OverloadShedder"], ["--strategy", "UniformLoadShedder"],
                  ["--strategy", "AvgShedder", "--placement", "AvgShedder"],
                  ["--strategy", "TransferShedder"],
                  ["--placement", "LeastResourceUsageWithWeight"],
                  ["--placement", "RoundRobinBrokerSelector"],
                  ["--set", "lowerBoundarySheddingEnabled=true"],
                  ["--set", "loadBalancerHistoryResourcePercentage=0", "--seed", "3"]]
    for f in MODULAR:
        for opts in strategies:
            add(["recommend", f, *opts, "-o", "json"])
            add(["explain", f, *opts])
    for f in SEQUENCES:
        for opts in strategies:
            add(["recommend", f, "--all-cycles", *opts, "-o", "json"])
    add(["explain", HOT, "--broker", "broker-2.pulsar.svc:8080"])
    add(["explain", HOT, "--broker", "broker-2.pulsar.svc:8080", "-o", "csv"])
    add(["explain", HOT, "--bundle", "acme/clickstream/0xc0000000_0xd0000000"])
    add(["explain", HOT, "--bundle", "acme/billing/0xc0000000_0xffffffff"])
    add(["explain", "examples/extensible/skewed.json", "--broker", "broker-5.pulsar.svc:8080"])
    add(["explain", "examples/extensible/pip220-12-2-1-1.jsonl", "--all-cycles",
         "--broker", "broker-1.pulsar.svc:8080"])
    add(["simulate", HOT, "--cycles", "30", "--strategy", "AvgShedder", "--placement",
         "AvgShedder", "--band", "5", "--bounce-window", "4", "--idle-usage", "2"])
    add(["recommend", HOT, "--broker-conf", "tests/data/broker.conf", "-o", "json"])
    add(["recommend", HOT, "--wide"])
    add(["explain", HOT, "--broker", "broker-2", "--wide"])
    add(["monitor-brokers", "--snapshot", HOT, "--wide"])
    for f in MODULAR + EXTENSIBLE:  # lbctl's planner (greedy: no solver time limit involved)
        add(["propose", f, "--solver", "greedy", "-o", "json"])
        add(["propose", f, "--solver", "greedy", "--explain"])
    add(["compare", "examples/pip364-90-10.json", "--cycles", "12", "--strategy",
         "ThresholdShedder", "--strategy", "lbctl"])
    for fmt in FORMATS:
        for limits in (("450", "200"), ("1900", "90"), ("1100", "110")):
            add(["split-bundle", "my-tenant/my-ns", "-b", "0x00000000_0x80000000", "-san",
                 "flow_or_qps_equally_divide", "--snapshot", FLOW,
                 "--set", f"loadBalancerNamespaceBundleMaxMsgRate={limits[0]}",
                 "--set", f"loadBalancerNamespaceBundleMaxBandwidthMbytes={limits[1]}", "-o", fmt])
        for algo in ("range_equally_divide", "topic_count_equally_divide"):
            add(["split-bundle", "my-tenant/my-ns", "-bt", "HOT", "-san", algo,
                 "--snapshot", FLOW, "-o", fmt])
        add(["split-bundle", "my-tenant/my-ns", "-bt", "LARGEST", "-san",
             "specified_positions_divide", "-sb", "0x30000000", "-sb", "0x60000000", "-u",
             "--snapshot", FLOW, "-o", fmt])
        add(["split-bundle", "acme/clickstream", "-b", "0xc0000000_0xd0000000",
             "--snapshot", HOT, "-o", fmt])
        add(["split-bundle", "acme/events", "-bt", "HOT",
             "--snapshot", "tests/data/split/auto-split.json", "-o", fmt])
    return cases


CASES = _cases()


def _run(args: list[str]) -> str:
    res = CliRunner().invoke(app, args, env={"COLUMNS": str(WIDTH), "LBCTL_TRACEBACK": "",
                                             "NO_COLOR": ""})
    return f"exit: {res.exit_code}\n--- stdout\n{res.stdout}--- stderr\n{res.stderr}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_output(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    got = _run(CASES[name])
    path = GOLDEN / f"{name}.txt"
    if os.environ.get("LBCTL_UPDATE_GOLDEN"):
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(got)
    assert path.exists(), f"no stored output for {name}: run with LBCTL_UPDATE_GOLDEN=1"
    assert got == path.read_text(), f"output of lbctl {' '.join(CASES[name])} changed"


def _is_table(args: list[str]) -> bool:
    fmt = args[args.index("-o") + 1] if "-o" in args else "table"
    return fmt == "table" and "--wide" not in args


TABLES = sorted(name for name, args in CASES.items() if _is_table(args))


@pytest.mark.parametrize("name", TABLES)
def test_tables_fit_80_columns(name: str) -> None:
    """Every table view of every example fits an 80-column terminal (the stored output is what
    COLUMNS=80 prints, so checking it checks the command)."""
    text = (GOLDEN / f"{name}.txt").read_text()
    stdout = text.split("--- stdout\n", 1)[1].split("--- stderr\n", 1)[0]
    wide = [line for line in stdout.splitlines() if len(line) > WIDTH]
    assert not wide, f"{len(wide)} line(s) wider than {WIDTH}: {wide[0]!r}"


def test_no_stale_golden_files() -> None:
    stored = {p.stem for p in GOLDEN.glob("*.txt")}
    assert stored == set(CASES)
