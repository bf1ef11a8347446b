"""A property-based sweep of hostile input through every command that reads it (hostile20).

Hypothesis builds hostile variants of the bundled examples and of every kind of input lbctl reads
— snapshot JSON, YAML and ``.jsonl`` sequences, plan files, journals, ``broker.conf`` and
``client.conf``, ``--set`` values, names on the command line, and the answers of the admin REST
API (the loopback sandbox) and of Prometheus (a loopback server) — with what the earlier corpora
(hostile10–19) did not try: ``NaN``/``Infinity``/``-0.0`` spelt in JSON, numbers past int64 and
the double range (``1e400``), a key twice, 10^5 brackets, a UTF-8 BOM, UTF-16, NUL bytes, lone
surrogates (escaped and raw), CRLF, YAML anchor bombs and tags (``!!python/object``), names with
``/``, ``..``, newlines, ANSI escape sequences and right-to-left overrides, empty files.

Each variant runs in-process (typer's command under click's ``CliRunner``, an alarm bounding it)
and must hold the contract: no exception and no ``internal error``; a refusal is exactly one
``lbctl: error:`` line and a non-zero exit (naming the file when the file is what is wrong); no
control character, bidirectional override or lone surrogate reaches stdout or stderr raw; a name
holding a newline starts no line of its own; a refused capture leaves no output file; and what
must be refused (not JSON, not UTF-8, not finite, a key twice, past a Java range, a YAML tag or
bomb, an empty file) is refused, never silently taken.

The default size runs in a few seconds (a fixed, derandomized set of examples); the ``slow``
versions draw many more, at random.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
import typer.main
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lbctl.cli.app import app
from tests.paths import DATA, EXAMPLES
from tests.prom_helpers import TwoBrokerPrometheus

COMMAND: click.Command = typer.main.get_command(app)  # built once (cli_cases.py)
ENV = {"COLUMNS": "80", "NO_COLOR": "1", "LBCTL_TRACEBACK": "", "LBCTL_CONTEXTS":
       "/nonexistent/lbctl-tests/contexts.json", "PULSAR_CLIENT_CONF": None, "PULSAR_HOME": None}
CLOSED = "http://127.0.0.1:9"  # nothing listens: a connection is refused at once
TIMEOUT = 60  # seconds one in-process run may take before it is a hang (a loaded CI machine)

_COMMON: dict[str, Any] = {"deadline": None, "database": None, "suppress_health_check": [
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large]}
QUICK = settings(max_examples=8, derandomize=True, **_COMMON)
FEW = settings(QUICK, max_examples=3)  # the kinds whose run costs most (a connection, a rebuild)
LONG = settings(max_examples=200, derandomize=True, **_COMMON)  # fixed draws: CI never meets a new one by chance

#: what must never reach a terminal raw: C0 controls (newline and tab aside: they are layout),
#: DEL, C1 controls, the bidirectional marks, overrides and isolates, and lone surrogates
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                 "\ud800-\udfff]")
#: the mark a hostile name carries after its newline: it must never start a line
INJECTED = "INJECTED"


# -- running a command ---------------------------------------------------------------------------
class Hang(Exception):
    """A run that outlived :data:`TIMEOUT`."""


def run(args: list[str], *, input: bytes | None = None, env: dict[str, str] | None = None
        ) -> Result:
    """``lbctl ARGS`` in-process, bounded by an alarm (its handler raises :class:`Hang` into the
    command, which the checks then report)."""

    def alarm(signum: int, frame: Any) -> None:
        raise Hang(f"lbctl {' '.join(args)[:200]} took over {TIMEOUT} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(TIMEOUT)
    try:
        return CliRunner().invoke(COMMAND, args, input=input, env={**ENV, **(env or {})})
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def errors(res: Result) -> list[str]:
    return [line for line in res.stderr.splitlines() if line.startswith("lbctl: error:")]


def check(res: Result, *, refuse: bool = False, names: str | None = None,
          allowed: tuple[int, ...] = (0,), table: bool = True) -> None:
    """The contract of one run (module docstring). ``refuse``: the input is one lbctl must refuse;
    ``names``: the refusal must name it (a file); ``allowed``: exit codes that are no refusal
    (doctor's 1 and 2 are its findings); ``table``: stdout is for people. JSON, YAML and CSV
    are data and carry a name as it is (``lbctl.render.render``: JSON and YAML escape the
    controls their syntax needs, CSV is escaped on a terminal only; a YAML string holding a
    newline may be folded over two lines and is still that string): stderr is checked then."""
    what = f"exit {res.exit_code}\nstdout: {res.stdout[-2000:]!r}\nstderr: {res.stderr[-2000:]!r}"
    assert res.exception is None or isinstance(res.exception, SystemExit), (
        f"{type(res.exception).__name__}: {res.exception}\n{what}")
    out = res.stdout + res.stderr
    assert "internal error" not in out and "Traceback" not in out, what
    shown = out if table else res.stderr  # data formats carry names as they are (render())
    raw = RAW.search(shown)
    assert raw is None, f"{raw[0]!r} reached the terminal raw\n{what}"
    assert not re.search(rf"^\W*{INJECTED}", shown, re.M), (
        f"a name's newline started a line\n{what}")
    said = errors(res)
    assert len(said) <= 1, f"more than one error line\n{what}"
    if said:
        assert res.exit_code != 0, what
    elif res.exit_code not in allowed:
        raise AssertionError(f"a non-zero exit without an error line\n{what}")
    if refuse:
        assert said, f"hostile input silently accepted\n{what}"
        if names is not None:
            assert names in said[0], f"the error line does not name {names}\n{what}"


# -- mutations of text ---------------------------------------------------------------------------
class Variant:
    """Hostile bytes, and whether lbctl must refuse them."""

    def __init__(self, data: bytes, refuse: bool, how: str) -> None:
        self.data, self.refuse, self.how = data, refuse, how

    def __repr__(self) -> str:
        return f"Variant({self.how}, refuse={self.refuse}, {len(self.data)} bytes)"


#: number spellings: (text, must a JSON document holding it be refused)
NUMBERS = [(b"NaN", True), (b"Infinity", True), (b"-Infinity", True), (b"1e400", True),
           (b"-1e400", True), (b"-0.0", False), (b"-0", False), (b"1e-400", False),
           (b"9223372036854775808", False), (b"-9223372036854775809", False),
           (b"18446744073709551616", False), (b"9" * 400, False), (b"1.7976931348623157e308", False)]
#: what goes into a JSON string (escaped spellings and raw bytes): (text, refused)
STRING_BITS = [(b"\\u001b[2J\\u001b]0;t\\u0007", False), (b"\\u202e", False), (b"\\u0000", False),
               (b"\\n" + INJECTED.encode(), False), (b"\\r\\n" + INJECTED.encode(), False),
               (b"/../..", False), (b"\\ud800", True), (b"\\udfff\\ud800", True),
               (b"\x1b[31m", True), (b"\x00", True), (b"\xed\xa0\x80", True), (b"\xff", True),
               (b"\\u009b2J", False), (b"\\u2066x\\u2069", False)]
#: names of brokers, namespaces, clusters
HOSTILE_NAMES = ["a/b", "..", "../../etc/passwd", f"x\n{INJECTED}", f"x\r\n{INJECTED}",
                 "\x1b[2J\x1b]0;pwned\x07", "b\u202er", "\u2067x", "\x9b31m", "\x00", "",
                 "x" * 3000, "public/default/..", "/", "\ud800"]

_NUMBER = re.compile(rb"(?<=[:\[,])\s*-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?=\s*[,\]}])")
_STRING = re.compile(rb'"(?:[^"\\\n]|\\.)*"')
_KEY = re.compile(rb'"([A-Za-z_][A-Za-z0-9_]*)"\s*:')


def _pick(draw: st.DrawFn, matches: list[re.Match[bytes]]) -> re.Match[bytes] | None:
    return matches[draw(st.integers(0, len(matches) - 1))] if matches else None


@st.composite
def json_variants(draw: st.DrawFn, base: bytes, *, lines: bool = False) -> Variant:
    """A hostile variant of the JSON document (or ``.jsonl`` sequence) ``base``."""
    kind = draw(st.sampled_from(["number", "string", "duplicate", "whole", "name"]))
    if kind == "number" and (m := _pick(draw, list(_NUMBER.finditer(base)))):
        text, refuse = draw(st.sampled_from(NUMBERS))
        return Variant(base[:m.start()] + b" " + text + base[m.end():], refuse, f"number {text!r}")
    if kind == "string" and (m := _pick(draw, list(_STRING.finditer(base)))):
        bit, refuse = draw(st.sampled_from(STRING_BITS))
        at = m.start() + 1 + draw(st.integers(0, max(0, len(m[0]) - 2)))
        while base[at - 1:at] == b"\\":  # never between a backslash and what it escapes
            at -= 1
        return Variant(base[:at] + bit + base[at:], refuse, f"string {bit!r}")
    if kind == "duplicate" and (m := _pick(draw, list(_KEY.finditer(base)))):
        return Variant(base[:m.start()] + m[0] + b" null, " + base[m.start():], True,
                       f"key {m[1]!r} twice")
    if kind == "name":
        name = draw(st.sampled_from(HOSTILE_NAMES[:-1]))  # a raw lone surrogate cannot be JSON
        spelt = json.dumps(name)[1:-1].encode()
        victim = draw(st.sampled_from(sorted(set(re.findall(rb'"([a-z][\w.-]*:\d+)"', base))
                                             or {b"public/default"})))
        return Variant(base.replace(victim, spelt), False, f"name {name[:20]!r}")
    how = draw(st.sampled_from(["bom", "utf16", "utf16le", "crlf", "empty", "blank", "deep",
                                "deep-object", "nul", "truncated"]))
    data, refuse = {
        "bom": (b"\xef\xbb\xbf" + base, False),
        "utf16": (base.decode().encode("utf-16"), True),
        "utf16le": (base.decode().encode("utf-16-le"), True),
        "crlf": (base.replace(b"\n", b"\r\n"), False),
        "empty": (b"", True),
        "blank": (b" \n\t\r\n", True),
        "deep": (b"[" * 100_000 + b"]" * 100_000, True),
        "deep-object": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, True),
        "nul": (base[:len(base) // 2] + b"\x00" + base[len(base) // 2:], True),
        "truncated": (base[:draw(st.integers(1, max(1, len(base) - 3)))], not lines),
    }[how]
    return Variant(data, refuse, how)


YAML_BOMB = b"".join([b'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'] + [
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n".encode() for p, c in zip("abcdefgh", "bcdefghi",
                                                                        strict=True)])


@st.composite
def yaml_variants(draw: st.DrawFn, base: bytes) -> Variant:
    """A hostile variant of the YAML snapshot ``base``."""
    lines = base.split(b"\n")
    how = draw(st.sampled_from(["value", "tag", "bomb", "duplicate", "bom", "utf16", "crlf",
                                "empty", "deep", "nul", "name"]))
    values = [i for i, line in enumerate(lines) if re.match(rb"\s*\w+: \S", line)]
    i = values[draw(st.integers(0, len(values) - 1))]
    key = lines[i].split(b":")[0]
    if how == "value":
        value, refuse = draw(st.sampled_from([
            (b".nan", None), (b".inf", None), (b"-.inf", None), (b"1.0e+400", None),
            (b"!!python/object/apply:os.system ['true']", True), (b'"\\ud800"', True),
            (b'"\\e[2J"', False), (b"99999999999999999999999", False), (b"-0.0", False),
            (b"!!binary aGk=", None), (b"!!set {a: null}", None), (b"~", None)]))
        lines[i] = key + b": " + value
        # a non-finite or odd-typed number is refused wherever a number goes; elsewhere a
        # string key may take it: only the tag and the lone surrogate are refused everywhere
        return Variant(b"\n".join(lines), bool(refuse), f"{key!r}: {value!r}")
    if how == "duplicate":
        lines.insert(i, lines[i])
        return Variant(b"\n".join(lines), True, f"{key!r} twice")
    if how == "name":
        name = draw(st.sampled_from(HOSTILE_NAMES[:-1]))
        spelt = json.dumps(name).encode()  # a YAML double-quoted string takes JSON's escapes
        return Variant(base.replace(b"prod-apac", spelt).replace(b"broker-2.pulsar.svc:8080:",
                                                                 spelt + b":"),
                       False, f"name {name[:20]!r}")
    data, refuse = {
        "tag": (b"!!python/object/apply:os.system ['true']\n" + base, True),
        "bomb": (YAML_BOMB, True),
        "bom": (b"\xef\xbb\xbf" + base, False),
        "utf16": (base.decode().encode("utf-16"), True),
        "crlf": (base.replace(b"\n", b"\r\n"), False),
        "empty": (b"", True),
        "deep": (b"[" * 100_000, True),
        "nul": (base + b"\x00", True),
    }[how]
    return Variant(data, refuse, how)


# -- bases ---------------------------------------------------------------------------------------
SNAPSHOT_JSON = [EXAMPLES / n for n in ("hot-broker.json", "balanced.json", "policies.json",
                                        "extensible/skewed.json")] + [DATA / "valid/full.json"]
SEQUENCES = [EXAMPLES / "two-brokers-90-10.jsonl", EXAMPLES / "avg-shedder.jsonl",
             DATA / "valid/sequence.jsonl"]
YAMLS = [EXAMPLES / "rolling-restart.yaml", DATA / "valid/minimal.yaml"]
HOT = str(EXAMPLES / "hot-broker.json")
#: the commands that read a snapshot file given as their argument (and their own options)
SNAPSHOT_COMMANDS: list[Callable[[str], list[str]]] = [
    lambda f: ["recommend", f], lambda f: ["explain", f], lambda f: ["propose", f],
    lambda f: ["simulate", f, "--cycles", "1"], lambda f: ["compare", f, "--cycles", "1", "--strategy", "ThresholdShedder", "--strategy",
               "OverloadShedder"],
    lambda f: ["doctor", f], lambda f: ["snapshot", "validate", f],
    lambda f: ["assign-preview", f, "--namespace", "public/new"],
    lambda f: ["monitor-brokers", "--once", "--snapshot", f],
    lambda f: ["drain", "broker-1.pulsar.svc:8080", "--snapshot", f, "--dry-run"],
    lambda f: ["recommend", f, "-o", "json"], lambda f: ["explain", f, "-o", "yaml"],
]


@contextlib.contextmanager
def scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="lbctl-h20-") as d:
        yield Path(d)


def _snapshot_case(data: st.DataObject, bases: list[Path], variants: Any) -> None:
    base = data.draw(st.sampled_from(bases), label="base")
    variant = data.draw(variants(base.read_bytes()), label="variant")
    command = data.draw(st.sampled_from(SNAPSHOT_COMMANDS), label="command")
    with scratch() as d:
        f = d / f"hostile{''.join(base.suffixes)}"
        f.write_bytes(variant.data)
        args = command(str(f))
        res = run(args)
        check(res, refuse=variant.refuse, names=str(f) if variant.refuse else None,
              allowed=(0, 1, 2) if args[0] == "doctor" else (0,), table="-o" not in args)


def _json(data: st.DataObject) -> None:
    _snapshot_case(data, SNAPSHOT_JSON, json_variants)


def _jsonl(data: st.DataObject) -> None:
    _snapshot_case(data, SEQUENCES, lambda b: json_variants(b, lines=True))


def _yaml(data: st.DataObject) -> None:
    _snapshot_case(data, YAMLS, yaml_variants)


@QUICK
@given(st.data())
def test_snapshot_json_sweep(data: st.DataObject) -> None:
    _json(data)


@QUICK
@given(st.data())
def test_snapshot_sequence_sweep(data: st.DataObject) -> None:
    _jsonl(data)


@QUICK
@given(st.data())
def test_snapshot_yaml_sweep(data: st.DataObject) -> None:
    _yaml(data)


FILE_NAMES = ["\x1b[2J\x1b]0;t\x07", f"a\n{INJECTED}", "b\u202er", "c\r", "d\x9b", "-", "--help",
              " lead", "e\u2066f", "g\ufeff"]


def _file_name_case(data: st.DataObject) -> None:
    """A snapshot file whose own name is hostile, good or bad, present or not: every line that
    names it shows it escaped."""
    stem = data.draw(st.sampled_from(FILE_NAMES), label="stem")
    good = data.draw(st.booleans(), label="good")
    exists = data.draw(st.booleans(), label="exists")
    command = data.draw(st.sampled_from(SNAPSHOT_COMMANDS), label="command")
    with scratch() as d:
        f = d / f"{stem}.json"
        if exists:
            f.write_bytes((EXAMPLES / "hot-broker.json").read_bytes() if good else b"{NaN}")
        args = command(str(f))
        check(run(args), refuse=not (good and exists),
              allowed=(0, 1, 2) if args[0] == "doctor" else (0,), table="-o" not in args)


@QUICK
@given(st.data())
def test_hostile_file_names_sweep(data: st.DataObject) -> None:
    _file_name_case(data)


# -- plans, journals, configuration files --------------------------------------------------------
@pytest.fixture(scope="module")
def plans() -> dict[str, bytes]:
    """Plans as recommend writes them (JSON and YAML)."""
    out = {}
    for name, args in (("plan.json", ["recommend", HOT, "-o", "json"]),
                       ("plan.yaml", ["recommend", HOT, "-o", "yaml"])):
        res = run(args)
        assert res.exit_code == 0, res.stderr
        out[name] = res.stdout.encode()
    return out


def _plan_case(data: st.DataObject, plans: dict[str, bytes]) -> None:
    name = data.draw(st.sampled_from(sorted(plans)), label="plan")
    variants = yaml_plan_variants if name.endswith(".yaml") else json_variants
    variant = data.draw(variants(plans[name]), label="variant")
    with scratch() as d:
        f = d / name
        f.write_bytes(variant.data)
        res = run(["apply", str(f), "--dry-run", "--admin-url", CLOSED, "--request-timeout", "2"],
                  env={"LBCTL_JOURNAL": str(d / "journal.jsonl")})
        # a good plan gets as far as the cluster (exit 3: nothing listens)
        check(res, refuse=variant.refuse, names=str(f) if variant.refuse else None)
        assert not (d / "journal.jsonl").exists() or res.exit_code != 0


@st.composite
def yaml_plan_variants(draw: st.DrawFn, base: bytes) -> Variant:
    how = draw(st.sampled_from(["tag", "bomb", "utf16", "empty", "deep", "nul", "duplicate"]))
    lines = base.split(b"\n")
    data = {
        "tag": b"!!python/object/apply:os.system ['true']\n" + base,
        "bomb": YAML_BOMB, "utf16": base.decode().encode("utf-16"), "empty": b"",
        "deep": b"[" * 100_000, "nul": base + b"\x00",
        "duplicate": b"\n".join([lines[1], *lines[1:]]),
    }[how]
    return Variant(data, True, how)


@QUICK
@given(st.data())
def test_plan_sweep(plans: dict[str, bytes], data: st.DataObject) -> None:
    _plan_case(data, plans)


JOURNAL = b"".join(json.dumps(x).encode() + b"\n" for x in [
    {"time": "2026-03-12T14:05:00.123Z", "run": "r1", "state": "sending",
     "action": "unload public/default/0x00000000_0x80000000", "method": "PUT",
     "url": "http://b:8080/admin/v2/namespaces/public/default/0x00000000_0x80000000/unload",
     "body": None, "status": None, "error": None},
    {"time": "2026-03-12T14:05:00.456Z", "run": "r1", "state": "done",
     "action": "unload public/default/0x00000000_0x80000000", "method": "PUT",
     "url": "http://b:8080/admin/v2/namespaces/public/default/0x00000000_0x80000000/unload",
     "body": None, "status": 204, "error": None}])


def _journal_case(data: st.DataObject) -> None:
    """A journal is lbctl's own append-only record: a bad line is skipped with a warning (a torn
    append must not hide the rest), so nothing here must be refused; the contract still holds."""
    variant = data.draw(json_variants(JOURNAL, lines=True), label="variant")
    with scratch() as d:
        f = d / "journal.jsonl"
        f.write_bytes(variant.data)
        for args in (["journal", "--journal", str(f)], ["journal", "--journal", str(f), "-o",
                                                         "json"]):
            check(run(args), table="-o" not in args)


@QUICK
@given(st.data())
def test_journal_sweep(data: st.DataObject) -> None:
    _journal_case(data)


BROKER_CONF = (DATA / "broker.conf").read_bytes()
CONF_VALUES = ["NaN", "Infinity", "-Infinity", "1e400", "-0.0", "9223372036854775808",
               "9" * 400, "", " ", "\x1b[2J", "\u202e", f"x\n{INJECTED}", "\\", "\\u00", "\\ud800",
               "true\x00", "org.apache.pulsar.broker.loadbalance.impl.\x1b[31mX"]


@st.composite
def conf_variants(draw: st.DrawFn, base: bytes) -> Variant:
    """A hostile ``key=value`` file (``java.util.Properties``: a bad value is the setting's
    problem, which lbctl reports or ignores as Pulsar would; only the file's encoding is
    refused)."""
    lines = base.split(b"\n")
    how = draw(st.sampled_from(["value", "duplicate", "bom", "utf16", "crlf", "empty", "nul",
                                "surrogate", "long"]))
    keyed = [i for i, line in enumerate(lines) if re.match(rb"\s*\w+\s*=", line)] or [0]
    i = keyed[draw(st.integers(0, len(keyed) - 1))]
    key = lines[i].split(b"=")[0]
    if how == "value":
        lines[i] = key + b"=" + draw(st.sampled_from(CONF_VALUES)).encode("utf-8", "surrogatepass")
        return Variant(b"\n".join(lines), False, f"value of {key!r}")
    if how == "duplicate":
        lines.insert(i + 1, key + b"=" + draw(st.sampled_from(CONF_VALUES[:8])).encode())
        return Variant(b"\n".join(lines), False, f"{key!r} twice")
    data = {"bom": b"\xef\xbb\xbf" + base, "utf16": base.decode().encode("utf-16"),
            "crlf": base.replace(b"\n", b"\r\n"), "empty": b"", "nul": base + b"\x00",
            "surrogate": base + b"\nx=\xed\xa0\x80\n", "long": base + b"\nx=" + b"y" * 4_000_000}
    return Variant(data[how], False, how)


def _broker_conf_case(data: st.DataObject) -> None:
    variant = data.draw(conf_variants(BROKER_CONF), label="variant")
    command = data.draw(st.sampled_from([["recommend", HOT], ["doctor", HOT],
                                         ["simulate", HOT, "--cycles", "1"]]), label="command")
    with scratch() as d:
        f = d / "broker.conf"
        f.write_bytes(variant.data)
        check(run([*command, "--broker-conf", str(f)]),
              allowed=(0, 1, 2) if command[0] == "doctor" else (0,))


@QUICK
@given(st.data())
def test_broker_conf_sweep(data: st.DataObject) -> None:
    _broker_conf_case(data)


def _client_conf_case(data: st.DataObject) -> None:
    base = f"webServiceUrl={CLOSED}\nauthPlugin=\nauthParams=\n".encode()
    variant = data.draw(conf_variants(base), label="variant")
    with scratch() as d:
        f = d / "client.conf"
        f.write_bytes(variant.data)
        # the flag's URL, where nothing listens (an emptied webServiceUrl would mean
        # localhost:8080, where anything may): a refusal whatever the file says
        res = run(["--client-conf", str(f), "--admin-url", CLOSED, "--request-timeout", "2",
                   "brokers"])
        check(res, allowed=())


@FEW
@given(st.data())
def test_client_conf_sweep(data: st.DataObject) -> None:
    _client_conf_case(data)


# -- values and names on the command line --------------------------------------------------------
NUMERIC_SETTINGS = ["loadBalancerBrokerOverloadedThresholdPercentage",
                    "loadBalancerHistoryResourcePercentage", "loadBalancerSheddingIntervalMinutes",
                    "loadBalancerBrokerThresholdShedderPercentage", "loadBalancerBundleUnloadMinThroughputThreshold",
                    "loadBalancerCPUResourceWeight", "loadBalancerMaxNumberOfBundlesToSplitPerCycle"]
OTHER_SETTINGS = ["loadBalancerSheddingEnabled", "loadBalancerLoadSheddingStrategy",
                  "loadBalancerSheddingExcludedNamespaces", "loadManagerClassName"]
#: values no numeric setting takes (Java's trim removes every character up to the space, so
#: "5\x00" is 5 to Pulsar too)
BAD_NUMBERS = ["NaN", "nan", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 400, "", " ",
               "1\n2", "0x10", "1_0", "\x1b[2J", "\u202e5", "5\x00x", "\ud800", "\u00a05x"]
hostile_text = st.lists(st.sampled_from(list("ab/.:-_ 0129\n\r\t\x00\x1b[]\x07\x9b") +
                                        ["\u202e", "\u2066", "\ufeff", "\ud800", "é", "東",
                                         INJECTED, "..", "public/default"]),
                        max_size=16).map("".join)


def _set_case(data: st.DataObject) -> None:
    if data.draw(st.booleans(), label="numeric"):
        key = data.draw(st.sampled_from(NUMERIC_SETTINGS), label="key")
        value, refuse = data.draw(st.sampled_from(BAD_NUMBERS), label="value"), True
    else:
        key = data.draw(st.sampled_from(OTHER_SETTINGS + NUMERIC_SETTINGS), label="key")
        value, refuse = data.draw(hostile_text, label="value"), False
    command = data.draw(st.sampled_from([["recommend", HOT], ["explain", HOT], ["doctor", HOT],
                                         ["propose", HOT]]), label="command")
    check(run([*command, "--set", f"{key}={value}"]), refuse=refuse,
          allowed=(0, 1, 2) if command[0] == "doctor" else (0,))


@QUICK
@given(st.data())
def test_set_values_sweep(data: st.DataObject) -> None:
    _set_case(data)


NAME_COMMANDS: list[Callable[[str], list[str]]] = [
    lambda n: ["unload", n, "--dry-run", "--admin-url", CLOSED, "--request-timeout", "2"],
    lambda n: ["explain", HOT, "--broker", n], lambda n: ["explain", HOT, "--bundle", n],
    lambda n: ["drain", n, "--snapshot", HOT, "--dry-run"],
    lambda n: ["rebalance-after", n, "--snapshot", HOT],
    lambda n: ["split-bundle", n, "--snapshot", HOT],
    lambda n: ["assign-preview", HOT, "--namespace", n],
    lambda n: ["assign-preview", HOT, "--broker-stopped", n],
    lambda n: ["assign-preview", HOT, "--topic", n],
    lambda n: ["recommend", HOT, "--set", f"loadBalancerSheddingExcludedNamespaces={n}"],
]


def _name_case(data: st.DataObject) -> None:
    name = data.draw(st.one_of(st.sampled_from(HOSTILE_NAMES), hostile_text,
                               hostile_text.map(lambda t: f"public/{t}")), label="name")
    command = data.draw(st.sampled_from(NAME_COMMANDS), label="command")
    res = run(command(name))
    # no such broker, namespace, bundle or topic holds a control character or a bidi override
    odd = bool(RAW.search(name)) or "\n" in name or "\ufeff" in name
    check(res, refuse=odd and command(name)[0] != "recommend")


@QUICK
@given(st.data())
def test_names_on_the_command_line_sweep(data: st.DataObject) -> None:
    _name_case(data)


# -- the answers of the admin API and of Prometheus ----------------------------------------------
ADMIN_PATHS = [r"/brokers$", r"/broker-stats/load-report", r"/broker-stats/topics", r"/tenants$",
               r"/namespaces/[^/]+$", r"/bundles$", r"/ownedNamespaces", r"/leaderBroker",
               r"/brokers/version", r"/configuration/values", r"/configuration/runtime",
               r"/namespaces/[^/]+/[^/]+/topics$", r"/dynamic/configuration"]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Any]:
    from lbctl.sandbox import hot_cluster

    c = hot_cluster(3)
    yield c
    c.stop()


def _admin_case(data: st.DataObject, cluster: Any) -> None:
    pattern = data.draw(st.sampled_from(ADMIN_PATHS), label="path")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    route = cluster._route
    mutate: dict[str, Variant] = {}

    def hostile(broker: str, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        answer = route(broker, method, path, *args, **kwargs)
        if method != "GET" or answer[0] != 200 or not re.search(pattern, path):
            return answer
        if path not in mutate:  # one variant per path, drawn from the answer it replaces
            mutate[path] = _seeded(answer[1], random.Random(seed))
        return 200, mutate[path].data, "application/json", {}

    cluster._route = hostile
    try:
        command = data.draw(st.sampled_from(["export", "brokers", "doctor", "recommend",
                                             "monitor-brokers"]), label="command")
        with scratch() as d:
            out = d / "s.json"
            args = {"export": ["snapshot", "export", "-f", str(out)], "brokers": ["brokers"],
                    "doctor": ["doctor"], "recommend": ["recommend"],
                    "monitor-brokers": ["monitor-brokers", "--once"]}[command]
            res = run(["--admin-url", cluster.admin_url, "--request-timeout", "5", *args])
            check(res, allowed=(0, 1, 2) if command == "doctor" else (0,))
            if command == "export":
                if res.exit_code != 0:
                    assert list(d.iterdir()) == [], "a refused capture left a file"
                else:
                    check(run(["snapshot", "validate", str(out)]))
    finally:
        cluster._route = route


def _seeded(body: bytes, r: random.Random) -> Variant:
    """A hostile variant of an HTTP answer's ``body``, picked by ``r`` (the answer is known only
    when the request comes, inside the command's run: the seed was drawn before)."""
    numbers = list(_NUMBER.finditer(body))
    strings = list(_STRING.finditer(body))
    keys = list(_KEY.finditer(body))
    choice = r.randrange(6)
    if choice == 0 and numbers:
        m = r.choice(numbers)
        text, refuse = r.choice(NUMBERS)
        return Variant(body[:m.start()] + b" " + text + body[m.end():], refuse, "number")
    if choice == 1 and strings:
        m = r.choice(strings)
        bit, refuse = r.choice(STRING_BITS)
        return Variant(body[:m.start() + 1] + bit + body[m.start() + 1:], refuse, "string")
    if choice == 2 and keys:
        m = r.choice(keys)
        return Variant(body[:m.start()] + m[0] + b" null, " + body[m.start():], True, "dup")
    whole = [b"\xef\xbb\xbf" + body, body.decode("utf-8", "replace").encode("utf-16"), b"",
             b"[" * 100_000, body + b"\x00", body.replace(b"\n", b"\r\n")]
    return Variant(r.choice(whole), False, "whole")


@pytest.mark.live
@QUICK
@given(st.data())
def test_admin_answers_sweep(sandbox: Any, data: st.DataObject) -> None:
    _admin_case(data, sandbox)


def _prometheus_case(data: st.DataObject) -> None:
    endpoint = data.draw(st.sampled_from(["series", "query_range"]), label="endpoint")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")

    def mutate(at: str, body: bytes) -> bytes:
        return _seeded(body, random.Random(seed)).data if at == endpoint else body

    prom = TwoBrokerPrometheus("prod-us", mutate=mutate, value="1.5")
    try:
        with scratch() as d:
            out = d / "out.jsonl"
            res = run(["snapshot", "from-prometheus", "--prometheus-url", prom.url, "--since",
                       "10m", "--step", "5m", "--reference", HOT, "-f", str(out),
                       "--request-timeout", "5"])
            check(res)
            if res.exit_code != 0:
                assert not out.exists(), "a refused rebuild left its output file"
            else:
                check(run(["snapshot", "validate", str(out)]))
    finally:
        prom.stop()


@FEW
@given(st.data())
def test_prometheus_answers_sweep(data: st.DataObject) -> None:
    _prometheus_case(data)


# -- the long versions ---------------------------------------------------------------------------
@pytest.mark.slow
@LONG
@given(st.data())
def test_long_snapshot_sweep(data: st.DataObject) -> None:
    data.draw(st.sampled_from([_json, _jsonl, _yaml, _file_name_case]), label="kind")(data)


@pytest.mark.slow
@LONG
@given(st.data())
def test_long_files_and_values_sweep(plans: dict[str, bytes], data: st.DataObject) -> None:
    kind = data.draw(st.sampled_from(["plan", "journal", "broker", "client", "set", "name",
                                      "prometheus"]), label="kind")
    if kind == "plan":
        _plan_case(data, plans)
    else:
        {"journal": _journal_case, "broker": _broker_conf_case, "client": _client_conf_case,
         "set": _set_case, "name": _name_case, "prometheus": _prometheus_case}[kind](data)


@pytest.mark.slow
@pytest.mark.live
@LONG
@given(st.data())
def test_long_admin_answers_sweep(sandbox: Any, data: st.DataObject) -> None:
    _admin_case(data, sandbox)


# -- a few as subprocesses -----------------------------------------------------------------------
#: (file name, bytes, arguments before the file): what the in-process runs cannot show — the real
#: process's exit status, its streams as bytes, and that it ends (a hang is a timeout here)
#: (one runs by default; the others are slow: a process costs a second or two on a loaded machine)
PROCESS_CASES = [
    pytest.param("escape.json", (EXAMPLES / "hot-broker.json").read_bytes().replace(
        b"broker-1.pulsar.svc:8080", b"\\u001b]0;t\\u0007\\u001b[2J\\nINJECTED\\u202e"),
        ["explain"], id="escape"),
    pytest.param("deep.json", b"[" * 100_000 + b"]" * 100_000, ["recommend"], id="deep",
                 marks=pytest.mark.slow),
    pytest.param("bomb.yaml", YAML_BOMB, ["explain"], id="bomb", marks=pytest.mark.slow),
    pytest.param("utf16.jsonl", (EXAMPLES / "two-brokers-90-10.jsonl").read_bytes().decode()
                 .encode("utf-16"), ["snapshot", "validate"], id="utf16", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("name", "body", "args"), PROCESS_CASES)
def test_hostile_files_in_a_real_process(tmp_path: Path, name: str, body: bytes,
                                         args: list[str]) -> None:
    import os
    import subprocess
    import sys

    f = tmp_path / name
    f.write_bytes(body)
    env = {k: v for k, v in os.environ.items() if k not in ("PULSAR_CLIENT_CONF", "PULSAR_HOME")}
    env.update(COLUMNS="80", NO_COLOR="1", LBCTL_TRACEBACK="")
    r = subprocess.run([sys.executable, "-m", "lbctl", *args, str(f)], capture_output=True,
                       timeout=120, env=env, stdin=subprocess.DEVNULL,
                       cwd=Path(__file__).resolve().parents[2])
    out, err = r.stdout.decode("utf-8", "surrogateescape"), r.stderr.decode("utf-8",
                                                                             "surrogateescape")
    assert b"Traceback" not in r.stdout + r.stderr and "internal error" not in err, err
    assert RAW.search(out + err) is None, (out + err)[:2000]
    assert not re.search(rf"^\W*{INJECTED}", out + err, re.M)
    if name == "escape.json":  # good, shown escaped
        assert r.returncode == 0, err
        assert "\\e]0;t\\x07\\e[2J\\nINJECTED\\u202e" in out
    else:
        assert r.returncode == 1 and err.count("\n") == 1 and err.startswith("lbctl: error: "), err
        assert str(f) in err
