"""What the hostile20 sweep (test_hostile20_sweep.py) found, each pinned by a test of its own.

* **A UTF-8 byte order mark opening a client.conf or broker.conf** (an editor's): Java's
  ``Properties.load(InputStream)`` reads ISO-8859-1, so the mark became three characters of the
  first key and that setting was ignored without a word — a client.conf whose first line is
  ``webServiceUrl`` then reached the default ``http://localhost:8080``. Now one line naming the
  file and the key. A mark before a comment or a blank line changes nothing, and is still read.
* **A newline in a broker id, a cluster, namespace or tenant name reached the terminal raw in
  prose**: tables escaped it (``name_safe``), but explain's reasoning (``x\\nINJECTED: usage
  35.0% …``) and doctor's notes kept it, so a snapshot or a cluster's answer could print lines of
  its own making. Now escaped as in tables.
* **A journal line with an integer past 64 bits** (a status, a step, a request body) decoded,
  then ``lbctl journal -o json`` died with ``internal error: TypeError: Integer exceeds 64-bit
  range``; a body nested past 255 levels did the same (``Recursion limit reached``). Such a line
  is now skipped as not lbctl's, as a torn line is.
* **A number setting Java refuses** (``--set``, broker.conf, a snapshot's config): Python's
  ``int``/``float`` read ``1_0`` as 10, ``٠.٩`` as 0.9 and stripped a no-break space; Pulsar's
  ``FieldParser`` (``Integer.valueOf``/``Double.valueOf`` after ``String.trim``) refuses them, so
  the broker would not start on what lbctl modelled. Now refused in one line; checked against
  the JDK's own parsers.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.paths import EXAMPLES

HOT = EXAMPLES / "hot-broker.json"
CLOSED = "http://127.0.0.1:9"
BOM = b"\xef\xbb\xbf"


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _one_error(res: Any) -> str:
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    lines = res.stderr.splitlines()
    assert res.exit_code != 0 and len(lines) == 1 and lines[0].startswith("lbctl: error: "), (
        res.exit_code, res.stderr)
    assert "internal error" not in lines[0]
    return lines[0]


# -- a byte order mark in a properties file --------------------------------------------------------
def test_a_bom_before_the_admin_url_of_a_client_conf_is_refused(tmp_path: Path) -> None:
    conf = tmp_path / "client.conf"
    conf.write_bytes(BOM + f"webServiceUrl={CLOSED}\n".encode())
    line = _one_error(_invoke("--client-conf", str(conf), "brokers"))
    assert line == (f"lbctl: error: {conf}: client.conf: a UTF-8 byte order mark opens the file, "
                    "so Java reads its first key as 'ï»¿webServiceUrl', not 'webServiceUrl' "
                    "(that setting would be ignored): save the file without it")


def test_a_bom_before_a_broker_conf_setting_is_refused(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_bytes(BOM + b"loadBalancerSheddingEnabled=false\n")
    for command in ("recommend", "doctor", "explain"):
        line = _one_error(_invoke(command, str(HOT), "--broker-conf", str(conf)))
        assert f"{conf}: broker.conf: a UTF-8 byte order mark" in line
        assert "'loadBalancerSheddingEnabled'" in line


@pytest.mark.parametrize("head", [b"# Licensed to the ASF\n", b"\n", b"! comment\n"],
                         ids=["comment", "blank", "bang-comment"])
def test_a_bom_before_a_comment_or_a_blank_line_changes_nothing(tmp_path: Path,
                                                                head: bytes) -> None:
    """Java makes a key of the mark and what follows on that line, which no one reads: the
    file's settings are all there, as the broker has them."""
    conf = tmp_path / "broker.conf"
    conf.write_bytes(BOM + head + b"loadBalancerSheddingEnabled=false\n")
    res = _invoke("recommend", str(HOT), "--broker-conf", str(conf), "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["settings"]["loadBalancerSheddingEnabled"] is False


# -- newlines in names, in prose -------------------------------------------------------------------
def _no_line_of_its_own(text: str) -> None:
    assert not re.search(r"^\W*INJECTED", text, re.M), text
    assert "\\nINJECTED" in text  # shown, escaped


def test_a_newline_in_a_broker_id_starts_no_line_in_explain(tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    f.write_text(HOT.read_text().replace("broker-1.pulsar.svc:8080", "x\\nINJECTED"))
    for args in ([], ["--all-cycles"], ["--broker", "x\nINJECTED"]):
        res = _invoke("explain", str(f), *args)
        assert res.exit_code == 0, res.stderr
        _no_line_of_its_own(res.stdout)


def test_a_newline_in_a_broker_id_with_a_common_suffix_starts_no_line(tmp_path: Path) -> None:
    """Short names (the common suffix left out) go through the same substitution."""
    f = tmp_path / "s.json"
    f.write_text(HOT.read_text().replace("broker-1.pulsar.svc:8080", "x\\nINJECTED.pulsar.svc:8080"))
    res = _invoke("explain", str(f))
    assert res.exit_code == 0, res.stderr
    _no_line_of_its_own(res.stdout)
    assert "(common suffix .pulsar.svc:8080 left out" in res.stdout


@pytest.mark.parametrize("what", ["cluster", "namespace"])
def test_a_newline_in_a_cluster_or_namespace_name_starts_no_line_in_explain(
        tmp_path: Path, what: str) -> None:
    text = HOT.read_text()
    text = (text.replace('"prod-us"', '"prod\\nINJECTED"') if what == "cluster"
            else text.replace("acme/clickstream", "acme/click\\nINJECTED"))
    f = tmp_path / "s.json"
    f.write_text(text)
    res = _invoke("explain", str(f))
    assert res.exit_code == 0, res.stderr
    _no_line_of_its_own(res.stdout)


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Any]:
    from lbctl.sandbox import hot_cluster

    c = hot_cluster(2)
    yield c
    c.stop()


@pytest.mark.live
def test_a_newline_in_a_tenant_name_starts_no_line_in_doctors_notes(
        sandbox: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cluster lists a tenant it then cannot read (404): doctor's note names it."""
    route = sandbox._route

    def tenants(broker: str, method: str, path: str, *args: Any, **kwargs: Any) -> Any:
        if method == "GET" and re.search(r"/tenants$", path):
            return 200, json.dumps(["x\r\nINJECTED", "public"]).encode(), "application/json", {}
        return route(broker, method, path, *args, **kwargs)

    monkeypatch.setattr(sandbox, "_route", tenants)
    res = _invoke("--admin-url", sandbox.admin_url, "--request-timeout", "5", "doctor")
    assert res.exit_code in (0, 1, 2), res.stderr
    assert "note: could not read tenant" in res.stdout
    _no_line_of_its_own(res.stdout)


# -- integers past 64 bits in a journal ------------------------------------------------------------
GOOD = {"time": "2026-03-12T14:05:00.123Z", "run": "r1", "state": "done",
        "action": "unload public/default/0x00000000_0x80000000", "method": "PUT",
        "url": "http://b:8080/admin/v2/namespaces/public/default/0x00000000_0x80000000/unload",
        "body": None, "status": 204, "error": None}
BAD = [("status", -(2**63) - 1), ("status", 2**64), ("step", 2**63), ("body", 2**70),
       ("body", {"a": [1, -(2**65)]}), ("outcomes", {"done": 2**64}),
       ("body", json.loads("[" * 300 + "]" * 300))]


@pytest.mark.parametrize(("key", "value"), BAD, ids=lambda v: str(v)[:20])
def test_a_journal_line_past_64_bits_is_skipped_not_an_internal_error(
        tmp_path: Path, key: str, value: Any) -> None:
    f = tmp_path / "journal.jsonl"
    f.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, key: value}) + "\n")
    for fmt in ("json", "table", "yaml", "jsonl"):
        res = _invoke("journal", "--journal", str(f), "-o", fmt)
        assert res.exit_code == 0, res.stderr
        assert "internal error" not in res.stderr
        assert "line 2" in res.stderr  # said, as a torn line is
    res = _invoke("journal", "--journal", str(f), "-o", "json")
    assert len(json.loads(res.stdout)["entries"]) == 1
    f.write_text(json.dumps({**GOOD, key: value}) + "\n")
    assert "not a journal" in _one_error(_invoke("journal", "--journal", str(f), "-o", "json"))


# -- numbers Java's parsers refuse ---------------------------------------------------------------
NUMBER_TEXTS = ["1_0", "1_000.5", "8_5", "85", " 85 ", "+85", "-0", "٨٥", "٠.٩", "0.9", "\t7\n",
                "85\u00a0", "\u200985", "1e3", "1E-2", "007", "9" * 12, "2147483648", "-2147483648"]


@pytest.mark.parametrize(("setting", "java_type"), [
    ("loadBalancerBrokerOverloadedThresholdPercentage", "int"),
    ("loadBalancerBundleUnloadMinThroughputThreshold", "double")])
def test_a_number_setting_takes_only_what_javas_parser_takes(tmp_path: Path, setting: str,
                                                             java_type: str) -> None:
    """Pulsar's ``FieldParser`` trims a value (``String.trim``) and hands it to
    ``Integer.valueOf`` or ``Double.valueOf``; lbctl took Python's ``int``/``float``, which also
    read ``1_0`` as 10 (digit separators), ``٠.٩`` as 0.9 and stripped a no-break space — a value
    the broker refuses (it does not start, or the dynamic update fails) lbctl silently took.
    Whatever lbctl takes, the JDK takes too, as the same number. (The JDK also takes ``1.5d`` and
    ``0x1p3``, and ``NaN``/``Infinity``: lbctl refuses those in one line.)"""
    from lbctl.config import SETTINGS_BY_NAME
    from lbctl.errors import ConfigError
    from tests.jdk import run_java

    if not (shutil.which("javac") and shutil.which("java")):
        pytest.skip("no JDK on the PATH (javac/java): Java's number parsers unchecked")
    source = tmp_path / "ParseNumbers.java"
    source.write_text(
        "import java.io.*;\n"
        "public class ParseNumbers { public static void main(String[] a) throws IOException {\n"
        "  BufferedReader in = new BufferedReader(new InputStreamReader(System.in, \"UTF-8\"));\n"
        "  PrintStream out = new PrintStream(System.out, true, \"UTF-8\");\n"
        "  for (String s; (s = in.readLine()) != null; ) { String t = s.replace(\"\\\\t\", \"\\t\")"
        ".replace(\"\\\\n\", \"\\n\"); String i, d;\n"
        "    try { i = \"\" + Integer.valueOf(t.trim()); } catch (NumberFormatException e) { i = \"-\"; }\n"
        "    try { d = \"\" + Double.valueOf(t.trim()); } catch (NumberFormatException e) { d = \"-\"; }\n"
        "    out.println(s + \"\\t\" + i + \"\\t\" + d); } } }\n")
    spelt = {t.replace("\t", "\\t").replace("\n", "\\n"): t for t in NUMBER_TEXTS}
    java = run_java("ParseNumbers", tmp_path, list(spelt), where=tmp_path)
    for key, text in spelt.items():
        as_int, as_double = java[key]
        expected = as_int if java_type == "int" else as_double
        try:
            got = SETTINGS_BY_NAME[setting].parse(text)
        except ConfigError:
            continue  # refused: never a silent divergence
        assert expected != "-", f"lbctl took {text!r} as {got!r}; Java refuses it"
        assert float(expected) == got, (text, expected, got)
    with pytest.raises(ConfigError):  # the finding itself, with or without a JDK
        SETTINGS_BY_NAME[setting].parse("1_0")


def test_a_journal_line_nested_100000_deep_is_skipped(tmp_path: Path) -> None:
    """An unknown key's value is skipped by msgspec recursively: ``RecursionError`` was an
    internal error for ``journal`` and ``apply --resume``."""
    f = tmp_path / "journal.jsonl"
    deep = b'{"x":' + b'{"a":' * 100_000 + b"1" + b"}" * 100_001
    f.write_bytes(json.dumps(GOOD).encode() + b"\n" + deep + b"\n")
    res = _invoke("journal", "--journal", str(f), "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert "line 2: nested too deeply" in res.stderr and "internal error" not in res.stderr
    f.write_bytes(deep + b"\n")
    assert "nested too deeply" in _one_error(_invoke("journal", "--journal", str(f)))
    line = _one_error(_invoke("apply", "--resume", str(f), "--dry-run", "--admin-url", CLOSED))
    assert "RecursionError" not in line


def test_a_contexts_file_nested_100000_deep_is_one_line(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``LBCTL_CONTEXTS`` is read by every command that connects: a deeply nested unknown value
    was ``internal error: RecursionError`` for all of them."""
    f = tmp_path / "contexts.json"
    f.write_bytes(b'{"current": null, "contexts": {}, "x": ' + b'{"a":' * 100_000 + b"1"
                  + b"}" * 100_001)
    monkeypatch.setenv("LBCTL_CONTEXTS", str(f))
    for args in (["context", "list"], ["--request-timeout", "1", "brokers"]):
        line = _one_error(_invoke(*args))
        assert line == f"lbctl: error: {f}: not lbctl's contexts file: nested too deeply"


# -- watch's plan records --------------------------------------------------------------------------
PID = "p-20260101T000000-abcdef"


def test_a_fifo_as_a_plan_record_hangs_no_command(tmp_path: Path) -> None:
    """``plans list``/``show`` read each record with ``Path.read_bytes``: a FIFO hung them
    forever (a subprocess here, bounded), and a link was followed."""
    import os
    import subprocess
    import sys

    record = tmp_path / "plans" / f"{PID}.meta.json"
    record.parent.mkdir()
    os.mkfifo(record)
    for args in (["plans", "list"], ["plans", "show", PID]):
        r = subprocess.run([sys.executable, "-m", "lbctl", *args, "--history", str(tmp_path)],
                           capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                           cwd=Path(__file__).resolve().parents[2])
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
        if args[1] == "show":
            assert r.returncode != 0 and r.stderr.count("\n") == 1, r.stderr
            assert "is a FIFO" in r.stderr
    record.unlink()
    record.symlink_to("/etc/passwd")
    line = _one_error(_invoke("plans", "show", PID, "--history", str(tmp_path)))
    assert "is a symbolic link" in line


def test_a_plan_record_nested_100000_deep_is_one_line(tmp_path: Path) -> None:
    record = tmp_path / "plans" / f"{PID}.meta.json"
    record.parent.mkdir()
    record.write_bytes(b'{"x":' + b'{"a":' * 100_000 + b"1" + b"}" * 100_001)
    res = _invoke("plans", "list", "--history", str(tmp_path))
    assert res.exit_code == 0 and "internal error" not in res.stderr, res.stderr
    assert "nested too deeply" in _one_error(_invoke("plans", "show", PID, "--history",
                                                     str(tmp_path)))


# -- a plan naming a broker no cluster has ---------------------------------------------------------
@pytest.mark.live
@pytest.mark.parametrize("field", ["broker", "destinationBroker"])
@pytest.mark.parametrize("name", ["x\x1b[2J\nINJECTED", "b\u202er", "a b:8080", "\u200b:8080"],
                         ids=["escape-newline", "rlo", "blank", "zero-width"])
def test_a_plan_naming_a_broker_id_with_a_control_character_is_refused(
        sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: str,
        name: str) -> None:
    """apply printed the plan's broker ids in its lines as they were: a newline in one started a
    line of its own (``from x\\e[2J`` / ``INJECTED to …``). A broker id is ``host:port``: such a
    plan is refused where it is read, naming the action and the field."""
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    res = _invoke("--admin-url", sandbox.admin_url, "recommend", "-o", "json")
    plan = json.loads(res.stdout)
    assert plan["actions"], res.stdout
    plan["actions"][0][field] = name
    f = tmp_path / "plan.json"
    f.write_text(json.dumps(plan))
    line = _one_error(_invoke("--admin-url", sandbox.admin_url, "apply", str(f), "--dry-run"))
    assert f"{f}: actions[0].{field}: expected a broker id (host:port" in line
    assert not (tmp_path / "journal.jsonl").exists() or "INJECTED" not in (
        tmp_path / "journal.jsonl").read_text()
