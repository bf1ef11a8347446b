"""The command lines whose outputs the CLI output tests check, and one way to run them.

Every bundled example × command × format × strategy variant is a *case*, named after its command
line. A few representative cases are pinned byte for byte (``tests/test_golden_outputs.py``); the
others are checked for behaviour (``tests/cli/test_outputs_*.py``): exit code, stderr, the format's
invariants and the decisions on the JSON fields (``tests/output_facts.py``).

Cases run through lbctl's command as Typer builds it (``typer.main.get_command(app)``, built once:
``typer.testing.CliRunner`` would rebuild the whole command tree for every invocation, ~0.14 s
each) under click's ``CliRunner`` on an 80-column terminal, once per test session: :func:`run` keeps each output, so a case checked by
several tests (its golden file, its table width, its facts, the JSON a YAML case is compared with)
runs once. An output depends on the command line only (examples are read-only, the env is fixed).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import click
import typer.main
from click.testing import CliRunner

from lbctl.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
FORMATS = ("table", "json", "yaml", "csv")
STREAMS = (*FORMATS, "jsonl")
WIDTH = 80
ENV = {"COLUMNS": str(WIDTH), "LBCTL_TRACEBACK": "", "NO_COLOR": ""}
NAME_LIMIT = 150

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
SKEWED = "examples/extensible/skewed.json"
MODULAR_LINEUP = ["--strategy", "ThresholdShedder", "--strategy", "OverloadShedder",
                  "--strategy", "UniformLoadShedder", "--strategy", "AvgShedder:AvgShedder",
                  "--strategy", "ThresholdShedder:LeastResourceUsageWithWeight"]
STRATEGIES = [["--strategy", "OverloadShedder"], ["--strategy", "UniformLoadShedder"],
              ["--strategy", "AvgShedder", "--placement", "AvgShedder"],
              ["--strategy", "TransferShedder"],
              ["--placement", "LeastResourceUsageWithWeight"],
              ["--placement", "RoundRobinBrokerSelector"],
              ["--set", "lowerBoundarySheddingEnabled=true"],
              ["--set", "loadBalancerHistoryResourcePercentage=0", "--seed", "3"]]


def case_name(args: list[str]) -> str:
    """The file-name-safe name of a command line; a long one keeps its start and its end (the
    format) around a hash of the whole line, so two long lines never share a name."""
    name = "_".join(re.sub(r"[^A-Za-z0-9.=-]+", "-", a).strip("-") for a in args)
    if len(name) <= NAME_LIMIT:
        return name
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{name[:60]}-{digest}-{name[-(NAME_LIMIT - 70):]}"


def _cases() -> dict[str, list[str]]:
    cases: dict[str, list[str]] = {}

    def add(args: list[str]) -> None:
        name = case_name(args)
        assert name not in cases, f"two command lines named {name}"
        cases[name] = args

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
        # CSV only: the other formats of this line were never checked (their names, cut at 150
        # characters, collided with the CSV one); compare's formats are covered by EXTENSIBLE.
        add(["compare", f, "--cycles", "12", *MODULAR_LINEUP, "-o", "csv"])
    for f in EXTENSIBLE:  # the extensible load manager in the simulator's loop
        for fmt in FORMATS:
            add(["simulate", f, "--cycles", "12", "-o", fmt])
            add(["compare", f, "--cycles", "12", "--strategy", "TransferShedder",
                 "--strategy", "ThresholdShedder", "-o", fmt])
    for f in MODULAR:
        for opts in STRATEGIES:
            add(["recommend", f, *opts, "-o", "json"])
            add(["explain", f, *opts])
    for f in SEQUENCES:
        for opts in STRATEGIES:
            add(["recommend", f, "--all-cycles", *opts, "-o", "json"])
    add(["explain", HOT, "--broker", "broker-2.pulsar.svc:8080"])
    add(["explain", HOT, "--broker", "broker-2.pulsar.svc:8080", "-o", "csv"])
    add(["explain", HOT, "--bundle", "acme/clickstream/0xc0000000_0xd0000000"])
    add(["explain", HOT, "--bundle", "acme/billing/0xc0000000_0xffffffff"])
    add(["explain", SKEWED, "--broker", "broker-5.pulsar.svc:8080"])
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
    # the formats the matrix above leaves out, once each
    for fmt in ("table", "yaml", "csv", "jsonl"):
        add(["snapshot", "validate", "tests/data/valid/sequence.jsonl", "-o", fmt])
        add(["propose", HOT, "--solver", "greedy", "-o", fmt])
    add(["simulate", HOT, "--cycles", "12", "-o", "jsonl"])
    add(["compare", SKEWED, "--cycles", "12", "--strategy", "TransferShedder",
         "--strategy", "ThresholdShedder", "-o", "jsonl"])
    add(["split-bundle", "acme/clickstream", "-b", "0xc0000000_0xd0000000",
         "--snapshot", HOT, "-o", "jsonl"])
    return cases


CASES = _cases()

_SPLIT_HOT = ["split-bundle", "acme/clickstream", "-b", "0xc0000000_0xd0000000", "--snapshot", HOT]
_COMPARE_SKEWED = ["compare", SKEWED, "--cycles", "12", "--strategy", "TransferShedder",
                   "--strategy", "ThresholdShedder"]
_PAIR = "examples/two-brokers-90-10.jsonl"

# The cases pinned byte for byte by a golden file (tests/data/golden/<name>.txt), by group.
GOLDEN_LINES: list[list[str]] = [
    # 1. every command in every format, on the reference modular example (one overloaded broker,
    #    five moves); snapshot validate on a sequence (one row per snapshot); compare's formats on
    #    the extensible example (the two load managers' shedders side by side) and its five-strategy
    #    modular line-up once
    *[["recommend", HOT, "-o", f] for f in STREAMS],
    *[["explain", HOT, "-o", f] for f in STREAMS],
    *[["monitor-brokers", "--snapshot", HOT, "--once", "-o", f] for f in STREAMS],
    *[["simulate", HOT, "--cycles", "12", "-o", f] for f in STREAMS],
    *[[*_SPLIT_HOT, "-o", f] for f in STREAMS],
    *[["propose", HOT, "--solver", "greedy", "-o", f] for f in STREAMS],
    ["propose", HOT, "--solver", "greedy", "--explain"],
    ["snapshot", "validate", HOT, "-o", "json"],
    *[["snapshot", "validate", "tests/data/valid/sequence.jsonl", "-o", f] for f in STREAMS],
    *[[*_COMPARE_SKEWED, "-o", f] for f in STREAMS],
    ["compare", HOT, "--cycles", "12", *MODULAR_LINEUP, "-o", "csv"],
    # 2. the extensible load manager (TransferShedder's rounds, transfer actions, its broker view)
    ["recommend", SKEWED, "-o", "table"], ["recommend", SKEWED, "-o", "json"],
    ["explain", SKEWED, "-o", "table"], ["explain", SKEWED, "-o", "json"],
    ["monitor-brokers", "--snapshot", SKEWED, "--once", "-o", "table"],
    ["simulate", SKEWED, "--cycles", "12", "-o", "table"],
    ["propose", SKEWED, "--solver", "greedy", "-o", "json"],
    # 3. a sequence replayed with --all-cycles (one section, one plan, one row set per cycle)
    ["recommend", _PAIR, "--all-cycles", "-o", "table"],
    ["recommend", _PAIR, "--all-cycles", "-o", "json"],
    ["recommend", _PAIR, "--all-cycles", "-o", "csv"],
    ["explain", _PAIR, "--all-cycles", "-o", "table"],
    ["explain", _PAIR, "--all-cycles", "-o", "json"],
    # 4. --wide (full broker names, no 80-column limit)
    ["recommend", HOT, "--wide"],
    ["explain", HOT, "--broker", "broker-2", "--wide"],
    ["monitor-brokers", "--snapshot", HOT, "--wide"],
    # 5. explain narrowed to a broker or a bundle
    ["explain", HOT, "--broker", "broker-2.pulsar.svc:8080"],
    ["explain", HOT, "--broker", "broker-2.pulsar.svc:8080", "-o", "csv"],
    ["explain", HOT, "--bundle", "acme/clickstream/0xc0000000_0xd0000000"],
    ["explain", SKEWED, "--broker", "broker-5.pulsar.svc:8080"],
    ["explain", "examples/extensible/pip220-12-2-1-1.jsonl", "--all-cycles",
     "--broker", "broker-1.pulsar.svc:8080"],
    # 6. every registered shedding and placement strategy, in explain's words (ThresholdShedder and
    #    LeastLongTermMessageRate are the defaults above; AvgShedder also on its own example, where
    #    its hit counts hold it back), and lbctl's planner against Pulsar's in compare
    *[["explain", HOT, *opts] for opts in STRATEGIES[:6]],
    ["explain", "examples/avg-shedder.jsonl", "-o", "table"],
    ["compare", "examples/pip364-90-10.json", "--cycles", "12", "--strategy",
     "ThresholdShedder", "--strategy", "lbctl"],
    # 7. every split algorithm, and splits inside a recommend plan
    ["split-bundle", "my-tenant/my-ns", "-b", "0x00000000_0x80000000", "-san",
     "flow_or_qps_equally_divide", "--snapshot", FLOW,
     "--set", "loadBalancerNamespaceBundleMaxMsgRate=450",
     "--set", "loadBalancerNamespaceBundleMaxBandwidthMbytes=200", "-o", "table"],
    ["split-bundle", "my-tenant/my-ns", "-bt", "HOT", "-san", "topic_count_equally_divide",
     "--snapshot", FLOW, "-o", "table"],
    ["split-bundle", "my-tenant/my-ns", "-bt", "LARGEST", "-san", "specified_positions_divide",
     "-sb", "0x30000000", "-sb", "0x60000000", "-u", "--snapshot", FLOW, "-o", "table"],
    ["split-bundle", "acme/events", "-bt", "HOT", "--snapshot", "tests/data/split/auto-split.json",
     "-o", "table"],
    ["recommend", "tests/data/split/auto-split.json", "-o", "table"],
    ["explain", "tests/data/split/auto-split.json", "-o", "table"],
    # 8. refusals: one line naming the problem, exit 2
    ["recommend", "examples/avg-shedder.jsonl", "--strategy", "OverloadShedder", "-o", "json"],
    ["recommend", "examples/extensible/pip220-12-2-1-1.jsonl", "--all-cycles", "--strategy",
     "OverloadShedder", "-o", "json"],
    ["simulate", "tests/data/valid/extensible.json", "--cycles", "12", "-o", "json"],
    # 9. options that change a command's settings or model
    ["simulate", HOT, "--cycles", "30", "--strategy", "AvgShedder", "--placement",
     "AvgShedder", "--band", "5", "--bounce-window", "4", "--idle-usage", "2"],
    ["recommend", HOT, "--broker-conf", "tests/data/broker.conf", "-o", "json"],
    # 10. inputs of other kinds: a YAML snapshot; legacy bundle stats (a shed broker with nothing
    #     worth moving)
    ["recommend", "examples/rolling-restart.yaml", "-o", "table"],
    ["recommend", "tests/data/valid/legacy_bundle_stats.json", "-o", "table"],
]
GOLDEN_CASES = [case_name(args) for args in GOLDEN_LINES]


@dataclass(frozen=True)
class Output:
    """What a command line printed, and how it ended."""

    exit_code: int
    stdout: str
    stderr: str

    def transcript(self) -> str:
        """The stored form of a golden file."""
        return f"exit: {self.exit_code}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"


_OUTPUTS: dict[tuple[str, ...], Output] = {}
_COMMAND: list[click.Command] = []


def _command() -> click.Command:
    """lbctl's click command, built by Typer's public API once per session."""
    if not _COMMAND:
        _COMMAND.append(typer.main.get_command(app))
    return _COMMAND[0]


def run(args: list[str]) -> Output:
    """Run ``lbctl args`` from the project root (the cases name files relative to it), once per
    session."""
    key = tuple(args)
    if key not in _OUTPUTS:
        with contextlib.chdir(ROOT):
            res = CliRunner().invoke(_command(), args, env=ENV)
        _OUTPUTS[key] = Output(res.exit_code, res.stdout, res.stderr)
    return _OUTPUTS[key]


def output_format(args: list[str]) -> str:
    return args[args.index("-o") + 1] if "-o" in args else "table"


def with_format(args: list[str], fmt: str) -> list[str]:
    """The same command line printing ``fmt``."""
    if "-o" in args:
        i = args.index("-o")
        return [*args[:i + 1], fmt, *args[i + 2:]]
    return [*args, "-o", fmt]


def command(args: list[str]) -> str:
    """The command a line runs: recommend, explain, monitor-brokers, snapshot-validate, simulate,
    compare, split-bundle, propose."""
    return "snapshot-validate" if args[:2] == ["snapshot", "validate"] else args[0]


def scenario(args: list[str]) -> str:
    """The name of the JSON form of a case: its formats share one set of expected facts."""
    return case_name(with_format(args, "json"))
