"""hostile21: hidden characters in data output, Unicode blanks in ``--set``, one duplicate-key
rule for every document, and watch's state read by the one safe reader. Each test fails on
8f5bcec (the guards say so in their names or docstrings).

* **Bidi and invisible characters in ``-o json``/``-o yaml``**: JSON and YAML encoders escape C0
  only, so a broker, namespace or cluster named with U+202E (right-to-left override), an isolate,
  a zero-width space or a C1 control (U+009B opens a control sequence on some terminals) reached
  the screen raw and reordered or hid text. Tables already escaped them. Now data output writes
  them as escapes (``\\u202e``) — the same document to any parser.
* **``--set`` took a no-break space, an em space or an ideographic space** off a key or a value
  (Python's ``strip``), so ``--set k=\\u00a070`` modelled 70 where the broker's ``FieldParser``
  (``String.trim`` removes U+0000–U+0020 only, then ``Integer.valueOf``) refuses the value.
  Now one line naming the character. Full-width digits stay accepted for an int: the JDK reads
  them (checked with Java 17 in a test).
* **Duplicate keys were checked per file**: every line of a ``.jsonl`` up to 4 MiB, no line of a
  larger one (nor any streamed sequence, nor a line or a ``.json`` over 4 MiB). Now every
  document is checked, whatever its size or its file's.
* **watch read its anomaly state, webhook queues and approved plans with ``read_bytes``**: a link
  was followed and a FIFO hung the watcher (and ``watch report``, ``plans approve``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.paths import EXAMPLES

HOT = EXAMPLES / "hot-broker.json"
#: RLO, LRI, RLI, ZWSP, CSI (C1), NEL (C1), DEL, ALM, BOM, word joiner, soft hyphen
HIDDEN = "\u202e\u2066\u2067\u200b\x9b\x85\x7f\u061c\ufeff\u2060\u00ad"
BROKER = "broker-1" + HIDDEN[:6] + ".pulsar.svc:8080"
NAMESPACE = "acme\u2067/click\u200bstream"
CLUSTER = "prod\u202eus"


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _one_error(res: Any) -> str:
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    lines = res.stderr.splitlines()
    assert res.exit_code != 0 and len(lines) == 1 and lines[0].startswith("lbctl: error: "), (
        res.exit_code, res.stderr)
    assert "internal error" not in lines[0]
    return str(lines[0])


class _Hung(BaseException):
    pass


@pytest.fixture(autouse=True)
def _alarm() -> Iterator[None]:
    """A FIFO read by mistake blocks forever: fail the test instead of hanging the run."""
    def hung(*_: object) -> None:
        raise _Hung("hung (a FIFO read?)")  # not an OSError: no reader's except may take it

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _hostile_snapshot(where: Path) -> Path:
    text = HOT.read_text()
    text = (text.replace('"broker-1.pulsar.svc:8080"', json.dumps(BROKER))
            .replace('"acme/clickstream', json.dumps(NAMESPACE)[:-1])
            .replace('"cluster": "prod-us"', f'"cluster": {json.dumps(CLUSTER)}'))
    assert BROKER not in text  # written escaped: the test's input is plain ASCII
    path = where / "hostile.json"
    path.write_text(text)
    return path


def _no_hidden(text: str) -> None:
    found = sorted({f"U+{ord(c):04X}" for c in text if c in HIDDEN})
    assert not found, f"raw hidden characters in output: {found}"


# -- 1. hidden characters in data output ---------------------------------------------------------
@pytest.mark.parametrize("fmt", ["json", "yaml", "jsonl", "table"])
@pytest.mark.parametrize("command", ["recommend", "explain"])
def test_hidden_characters_in_names_are_escaped_in_every_format(tmp_path: Path, command: str,
                                                                 fmt: str) -> None:
    snap = _hostile_snapshot(tmp_path)
    res = _invoke(command, str(snap), "-o", fmt)
    assert res.exit_code == 0, res.stderr
    _no_hidden(res.stdout)
    _no_hidden(res.stderr)
    if fmt == "json":  # the escape is lossless: the parsed document has the names as they were
        doc = json.loads(res.stdout)
        assert doc["cluster"] == CLUSTER
        assert BROKER in json.dumps(doc, ensure_ascii=False)
    elif fmt == "yaml":
        doc = yaml.safe_load(res.stdout)
        assert doc["cluster"] == CLUSTER
        assert BROKER in json.dumps(doc, ensure_ascii=False)
    elif fmt == "jsonl":
        rows = [json.loads(line) for line in res.stdout.splitlines()]
        text = json.dumps(rows, ensure_ascii=False)
        assert rows and (NAMESPACE in text or BROKER in text)


def test_a_streamed_all_cycles_plan_escapes_hidden_characters(tmp_path: Path) -> None:
    """``recommend SEQ.jsonl --all-cycles -o json`` writes each cycle's plan as it is made
    (:mod:`lbctl.render.plan_stream`), not through the one renderer."""
    one = json.loads(_hostile_snapshot(tmp_path).read_text())
    seq = tmp_path / "seq.jsonl"
    lines = []
    for i in range(3):
        one["capturedAt"] = f"2026-03-12T14:0{i}:00Z"
        lines.append(json.dumps(one))
    seq.write_text("\n".join(lines) + "\n")
    res = _invoke("recommend", str(seq), "--all-cycles", "-o", "json")
    assert res.exit_code == 0, res.stderr
    _no_hidden(res.stdout)
    assert json.loads(res.stdout)["cycles"][0]["cluster"] == CLUSTER


def test_csv_keeps_names_raw_for_a_pipe_and_escapes_them_for_a_terminal(tmp_path: Path) -> None:
    """Guard (true before): CSV has no escape of its own, so a file or a pipe gets the name as
    it is (lossless); a terminal gets it escaped, as a table."""
    import io

    from lbctl.render import render

    class _Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    class _View:
        def to_data(self) -> Any:
            return {}

        def to_rows(self) -> list[dict[str, Any]]:
            return [{"broker": BROKER}]

        def to_text(self) -> str:
            return ""

    pipe, tty = io.StringIO(), _Tty()
    render(_View(), "csv", pipe)
    render(_View(), "csv", tty)
    assert BROKER in pipe.getvalue()
    _no_hidden(tty.getvalue())


def test_the_yaml_escape_keeps_other_unicode_as_it_was() -> None:
    """Only a scalar holding a hidden character is written with escapes (guard: true before)."""
    from lbctl.render import to_yaml

    text = to_yaml({"broker": "東京-1:8080", "note": "é"})
    assert text == "broker: 東京-1:8080\nnote: é\n"


_TEXT = st.text(st.sampled_from([*HIDDEN, "a", "東", "é", '"', "\\", ":", "\n", "\x01", " ",
                                 "\u2028", "\U0001f600"]), max_size=12)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.dictionaries(_TEXT, st.one_of(_TEXT, st.lists(_TEXT, max_size=3)), max_size=4))
def test_json_and_yaml_escapes_are_lossless_and_hide_nothing(data: dict[str, Any]) -> None:
    from lbctl.render import to_json, to_json_line, to_yaml

    for text in (to_json(data), to_json_line(data)):
        _no_hidden(text)
        assert json.loads(text) == data
    text = to_yaml(data)
    _no_hidden(text)
    assert yaml.safe_load(text) == data


def test_watch_json_lines_escape_hidden_characters(capsys: pytest.CaptureFixture[str]) -> None:
    """The watcher's stdout events (``lbctl watch`` without ``--webhook``) are JSON lines."""
    from lbctl.watch import notify

    class _Rec(notify.Notifier):
        pass

    original = notify.record
    try:
        notify.record = lambda e, cluster: {"cluster": cluster, "broker": e}  # type: ignore[assignment]
        state = type("S", (), {"cluster": CLUSTER})()
        _Rec([]).events([BROKER], state)  # type: ignore[list-item]
    finally:
        notify.record = original
    out = capsys.readouterr().out
    _no_hidden(out)
    assert json.loads(out) == {"cluster": CLUSTER, "broker": BROKER}


# -- 2. --set with Unicode blanks and digits -----------------------------------------------------
INT_SETTING = "loadBalancerBrokerOverloadedThresholdPercentage"
DOUBLE_SETTING = "loadBalancerBundleUnloadMinThroughputThreshold"
STRING_SETTING = "loadBalancerLoadSheddingStrategy"


@pytest.mark.parametrize(("item", "named"), [
    (f"{INT_SETTING}=\u00a070", "U+00A0 (NO-BREAK SPACE)"),
    (f"{INT_SETTING}=70\u3000", "U+3000 (IDEOGRAPHIC SPACE)"),
    (f"{INT_SETTING}=\u200970", "U+2009 (THIN SPACE)"),
    (f"\u00a0{INT_SETTING}=70", "U+00A0 (NO-BREAK SPACE)"),
    (f"{INT_SETTING}\u2003=70", "U+2003 (EM SPACE)"),
    (f"{INT_SETTING}=7\u200b0", "U+200B (ZERO WIDTH SPACE)"),
    (f"{STRING_SETTING}=\u00a0org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder",
     "U+00A0 (NO-BREAK SPACE)"),
    (f"{INT_SETTING}=\u202e07", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
])
def test_set_with_a_unicode_blank_is_one_line(item: str, named: str) -> None:
    """Python's ``strip`` took the first five off and modelled a value the broker refuses."""
    line = _one_error(_invoke("recommend", str(HOT), "--set", item))
    assert named in line and "String.trim" in line
    assert all(c not in line for c in HIDDEN + "\u00a0\u3000\u2009\u2003")  # shown escaped


def test_set_is_trimmed_as_java_trims() -> None:
    """ASCII blanks and controls around a key and a value go, as Java's ``String.trim`` takes
    them (Python's ``strip`` kept ``\x01``, so lbctl refused a value the broker takes);
    full-width digits are an int to ``Integer.valueOf`` (a guard: true before)."""
    from lbctl.config import parse_assignments

    assert parse_assignments([f"\t{INT_SETTING} = 70\x01 "]) == {INT_SETTING: "70"}
    res = _invoke("recommend", str(HOT), "--set", f"{INT_SETTING}=\uff17\uff10", "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["settings"][INT_SETTING] == 70
    line = _one_error(_invoke("recommend", str(HOT), "--set", f"{DOUBLE_SETTING}=\uff11\uff10"))
    assert DOUBLE_SETTING in line


SET_VALUES = ["70", " 70 ", "\u00a070", "70\u00a0", "\u200970", "70\u3000", "\u200b70",
              "\uff17\uff10", "\u0667\u0660", "7\u00a00", "\u202070", "\t70\n", "\x0070",
              "\u180e70", "\ufeff70", "10.5", "\uff11\uff10.5", "1\u00a0.5"]


def test_set_takes_only_what_the_jdk_takes(tmp_path: Path) -> None:
    """``FieldParser.stringToInteger``/``stringToDouble`` (pulsar-common, read at 00855f5b) are
    ``Integer.valueOf(value.trim())`` and ``Double.valueOf(value.trim())``: run by the JDK on
    each value; whatever ``--set`` takes, the JDK takes as the same number."""
    from lbctl.config import SETTINGS_BY_NAME, parse_assignments
    from lbctl.errors import LbctlError
    from tests.jdk import run_java

    if not (shutil.which("javac") and shutil.which("java")):
        pytest.skip("no JDK on the PATH (javac/java): Java's number parsers unchecked")
    source = tmp_path / "TrimParse.java"
    source.write_text(
        "import java.io.*;\n"
        "public class TrimParse { public static void main(String[] a) throws IOException {\n"
        "  BufferedReader in = new BufferedReader(new InputStreamReader(System.in, \"UTF-8\"));\n"
        "  PrintStream out = new PrintStream(System.out, true, \"UTF-8\");\n"
        "  for (String s; (s = in.readLine()) != null; ) {\n"
        "    StringBuilder b = new StringBuilder();\n"
        "    for (String h : s.split(\",\")) b.appendCodePoint(Integer.parseInt(h, 16));\n"
        "    String t = b.toString(), i, d;\n"
        "    try { i = \"\" + Integer.valueOf(t.trim()); } catch (NumberFormatException e) { i = \"-\"; }\n"
        "    try { d = \"\" + Double.valueOf(t.trim()); } catch (NumberFormatException e) { d = \"-\"; }\n"
        "    out.println(s + \"\\t\" + i + \"\\t\" + d); } } }\n")
    spelt = {",".join(f"{ord(c):x}" for c in v): v for v in SET_VALUES}
    java = run_java("TrimParse", tmp_path, list(spelt), where=tmp_path)
    taken = 0
    for key, text in spelt.items():
        as_int, as_double = java[key]
        for setting, expected in ((INT_SETTING, as_int), (DOUBLE_SETTING, as_double)):
            try:
                value = parse_assignments([f"{setting}={text}"])[setting]
                got = SETTINGS_BY_NAME[setting].parse(value)
            except LbctlError:
                continue  # refused in one line: never a silent divergence
            assert expected != "-", f"--set took {text!r} as {got!r}; Java refuses it"
            assert float(expected) == got, (text, expected, got)
            taken += 1
    assert taken >= 6  # the plain ones, and the full-width and Arabic-Indic ints
    assert java[",".join(f"{ord(c):x}" for c in "\u00a070")][0] == "-"  # the finding, per the JDK


# -- 3. one duplicate-key rule -------------------------------------------------------------------
def _with_duplicate_broker(pad: int) -> bytes:
    """hot-broker.json on one line with its first broker's report twice, padded with ``pad``
    blanks inside the object (the size of a large snapshot, without building one)."""
    doc = json.loads(HOT.read_text())
    first = next(iter(doc["brokers"]))
    line = json.dumps(doc, separators=(",", ":")).encode()
    at = line.index(b'"brokers":{') + len(b'"brokers":{')
    dup = json.dumps(first).encode() + b":" + json.dumps(doc["brokers"][first]).encode() + b","
    return line[:1] + b" " * pad + line[1:at] + dup + line[at:]


def _good_line(minute: int) -> bytes:
    doc = json.loads(HOT.read_text())
    doc["capturedAt"] = f"2026-03-12T14:{minute:02d}:00Z"
    return json.dumps(doc, separators=(",", ":")).encode()


MIB = 1 << 20


@pytest.mark.parametrize(("name", "build"), [
    ("small.jsonl", lambda: _good_line(0) + b"\n" + _with_duplicate_broker(0) + b"\n"),
    # a file over 4 MiB of small lines: whole-file read (validate) and streamed (recommend)
    ("large.jsonl", lambda: b"\n".join([_good_line(0) + b" " * (5 * MIB),
                                        _with_duplicate_broker(0), _good_line(59)]) + b"\n"),
    # one line over 4 MiB
    ("line.jsonl", lambda: _with_duplicate_broker(5 * MIB) + b"\n"),
    ("doc.json", lambda: _with_duplicate_broker(5 * MIB)),
])
@pytest.mark.parametrize("command", [["snapshot", "validate"], ["recommend"]])
def test_a_repeated_broker_id_is_refused_whatever_the_size(tmp_path: Path, name: str,
                                                           build: Any, command: list[str]) -> None:
    """On 8f5bcec only the small file was refused; the others kept the second report silently."""
    path = tmp_path / name
    path.write_bytes(build())
    line = _one_error(_invoke(*command, str(path)))
    assert "appears twice in one object (brokers: two reports for one broker id)" in line, line
    assert line.startswith(f"lbctl: error: {path}")


def test_fleet_checks_the_lines_of_every_file_for_repeated_keys() -> None:
    from lbctl.fleet.native import check_keys

    assert check_keys(0) and check_keys(1 << 34)


def test_the_check_names_the_key_in_any_object() -> None:
    """Guard: the marker-returning hook still finds a key repeated deep inside (true before)."""
    from lbctl.errors import LbctlError
    from lbctl.sources.snapshot import load_json

    with pytest.raises(LbctlError, match='the key "b" appears twice in one object'):
        load_json("x.json", b'{"a": [{"c": 1}, {"b": 1, "b": 2}]}')
    assert load_json("x.json", b'{"a": {"b": 1}, "c": {"b": 2}}') == {"a": {"b": 1},
                                                                      "c": {"b": 2}}


# -- 4. watch's state, read by the one safe reader ----------------------------------------------
def _plant(path: Path, kind: str, target: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    else:
        target.write_text('{"open": [], "resolved": [], "pending": [], "actions": '
                          '[{"bundle": "a/b/0x00000000_0xffffffff"}]}')
        path.symlink_to(target)


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_the_anomaly_state_is_read_safely(tmp_path: Path, kind: str) -> None:
    from lbctl.errors import LbctlError
    from lbctl.watch.anomalies import ANOMALY_FILE, Tracker

    path = tmp_path / ANOMALY_FILE
    _plant(path, kind, tmp_path / "elsewhere.json")
    with pytest.raises(LbctlError) as e:
        Tracker().load(path)
    assert str(e.value).startswith(str(path)) and "\n" not in str(e.value)


def test_watch_report_on_a_fifo_anomaly_state_is_one_line(tmp_path: Path) -> None:
    from lbctl.watch.anomalies import ANOMALY_FILE

    os.mkfifo(tmp_path / ANOMALY_FILE)
    line = _one_error(_invoke("watch", "--status", "--history", str(tmp_path)))
    assert ANOMALY_FILE in line


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_webhook_queue_is_read_safely(tmp_path: Path, kind: str) -> None:
    import hashlib

    from lbctl.errors import LbctlError
    from lbctl.watch.notify import Webhook

    url = "http://127.0.0.1:9/hook"
    path = tmp_path / f"webhook-{hashlib.sha256(url.encode()).hexdigest()[:16]}.json"
    _plant(path, kind, tmp_path / "elsewhere.json")
    with pytest.raises(LbctlError) as e:
        Webhook(url, "json", tmp_path, post=lambda _u, _b: None)
    assert str(path) in str(e.value)


def test_a_missing_state_file_is_a_fresh_start(tmp_path: Path) -> None:
    """Nothing at the name is no state (a guard: true before); a dangling link at it is refused
    (before, a missing target read as a fresh start)."""
    from lbctl.errors import LbctlError
    from lbctl.watch.anomalies import Tracker
    from lbctl.watch.notify import Webhook

    Tracker().load(tmp_path / "none.json")
    assert Webhook("http://127.0.0.1:9/h", "json", tmp_path, post=lambda _u, _b: None).q.pending == []
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere")
    with pytest.raises(LbctlError):
        Tracker().load(tmp_path / "dangling.json")


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_the_watchers_approved_plan_is_read_safely(tmp_path: Path, kind: str) -> None:
    """A FIFO at an approved plan's name hung the watcher's loop; a link was followed."""
    from lbctl.watch.loop import _bundles_of

    path = tmp_path / "p.plan.json"
    _plant(path, kind, tmp_path / "elsewhere.json")
    assert _bundles_of(path) == frozenset()
    plain = tmp_path / "plain.json"
    plain.write_text('{"actions": [{"bundle": "a/b/0x00000000_0xffffffff"}]}')
    assert _bundles_of(plain) == {"a/b/0x00000000_0xffffffff"}  # guard


# -- found by the history-directory sweep (test_hostile21_sweep.py) -----------------------------
@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, str]:
    from tests.security.test_hostile21_sweep import _make_state

    root = tmp_path / "history"
    return root, _make_state(root)


def _spoil_record(root: Path, pid: str, **fields: str) -> None:
    path = root / "plans" / f"{pid}.meta.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **fields}))


@pytest.mark.parametrize("field", ["source", "anomaly", "created", "status"])
def test_a_plan_records_fields_are_escaped_on_the_terminal(history: tuple[Path, str],
                                                           field: str) -> None:
    """``plans show`` kept newlines in the record's line and ``watch --status`` printed the
    record's fields raw (an ESC cleared the screen)."""
    root, pid = history
    _spoil_record(root, pid, **{field: "x\x1b[2J\nINJECTED"})
    for args in (["plans", "show", pid], ["plans", "show", pid, "-o", "json"],
                 ["watch", "--status"]):
        res = _invoke(*args, "--history", str(root))
        shown = res.stdout + res.stderr
        assert "\x1b[2J" not in shown and "\nINJECTED" not in shown, (args, shown)
        assert "internal error" not in shown


def test_a_plan_record_of_another_id_is_one_line(history: tuple[Path, str]) -> None:
    """The record's id named the plan's file: a NUL in it was ``internal error: ValueError:
    embedded null byte``, a newline a line of its own."""
    root, pid = history
    _spoil_record(root, pid, id=pid + "\x00\nINJECTED")
    for args in (["plans", "show", pid], ["plans", "show", pid, "-o", "json"]):
        line = _one_error(_invoke(*args, "--history", str(root)))
        assert "the record is not plan" in line and "\\u0000" in line
    res = _invoke("plans", "list", "--history", str(root))
    assert res.exit_code == 0 and pid not in res.stdout  # left out, as an unreadable record is


@pytest.mark.parametrize("when", [9223372036854775807, -1, 253_402_300_800_000])
def test_an_anomaly_time_no_clock_gives_is_one_line(history: tuple[Path, str], when: int) -> None:
    """``watch --status`` printed each active anomaly's time as a date: ``internal error:
    ValueError: year 292278994 is out of range``."""
    root, _ = history
    path = root / "anomalies.json"
    saved = json.loads(path.read_text())
    saved["open"][0]["first_seen"] = when
    path.write_text(json.dumps(saved))
    line = _one_error(_invoke("watch", "--status", "--history", str(root)))
    assert "not the watcher's anomaly state" in line and "1970-9999" in line


@pytest.mark.parametrize("rel", ["anomalies.json", "plans/{pid}.meta.json", "plans/{pid}.json"])
def test_invalid_utf8_in_watch_state_is_one_line(history: tuple[Path, str], rel: str) -> None:
    """msgspec raises ``UnicodeDecodeError`` (not ``DecodeError``) for a string that is not
    UTF-8: ``internal error`` from ``watch --status`` and ``plans show``."""
    root, pid = history
    path = root / rel.format(pid=pid)
    data = path.read_bytes()
    opening = b'":"' if b'":"' in data else b'": "'
    at = data.index(opening) + len(opening)  # inside the first string value
    path.write_bytes(data[:at] + b"\xed\xa0\x80" + data[at:])
    for args in (["watch", "--status"], ["plans", "show", pid], ["plans", "show", pid, "-o",
                                                                  "json"]):
        res = _invoke(*args, "--history", str(root))
        if res.exit_code != 0:
            _one_error(res)
        assert "internal error" not in res.stdout + res.stderr


def test_invalid_utf8_in_a_watcher_record_is_left_out(history: tuple[Path, str]) -> None:
    """``History.seen`` caught ``DecodeError`` only: a record line that is not UTF-8 was
    ``internal error: UnicodeDecodeError`` for ``watch --status``; it is left out, as a line
    that does not decode is."""
    import gzip

    root, _ = history
    path = next(root.glob("lbctl-watch-*.jsonl.gz"))
    text = gzip.decompress(path.read_bytes())
    at = text.index(b'":"') + 3
    path.write_bytes(gzip.compress(text[:at] + b"\xed\xa0\x80" + text[at:]))
    res = _invoke("watch", "--status", "--history", str(root))
    assert res.exit_code == 0 and "internal error" not in res.stderr, res.stderr
