"""lbctl.properties reads a file exactly as ``java.util.Properties.load(InputStream)`` does (JDK
17's ``LineReader`` and ``loadConvert``), which is how Pulsar reads broker.conf
(``PulsarConfigurationLoader.create``) and pulsar-admin reads client.conf.

The differential test runs the JDK itself: tests/data/java/PropsEcho.java (plain JDK, a dozen
lines) is compiled once per session into a temporary folder and loads every generated file;
without a JDK it skips, saying so (``pytest -rs``)."""

from __future__ import annotations

import base64
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lbctl.errors import ConfigError
from lbctl.properties import MalformedEscape, parse_properties, read_properties
from tests.paths import DATA


def test_blank_is_a_separator_as_in_java() -> None:
    """Issue 25 #2: ``webServiceUrl https://…`` and ``loadBalancerSheddingEnabled false`` (a blank
    as the separator) were ignored."""
    got = parse_properties(b"webServiceUrl https://pulsar:8443\n"
                           b"loadBalancerSheddingEnabled false\n"
                           b"key = = value\n"
                           b"  \t\fleading:x\n")
    assert got == {"webServiceUrl": "https://pulsar:8443", "loadBalancerSheddingEnabled": "false",
                   "key": "= value", "leading": "x"}


def test_continuations_escapes_latin1_and_line_ends() -> None:
    got = parse_properties(
        b"authParams=token:abc\\\n     def\\\\\n"       # a continuation; an even run is not one
        b"k\\ e\\=y\\:=v\\u0041\\t\\q\n"                 # escaped separators, \\u, \\t, \\q = q
        b"caf\xe9=\xe9t\xe9\n"                            # ISO-8859-1 bytes
        b"nel=a\x85b\xe2\x80\xa8c\x0bd\r"                 # NEL, U+2028 as UTF-8, VT: not line ends
        b"cr=1\r\ncrlf=2\n"
        b"  # comment\n! comment\n"
        b"last=end\\")                                    # a backslash at the end of the file
    assert got == {"authParams": "token:abcdef\\", "k e=y:": "vA\tq", "café": "été",
                   "nel": "a\x85b\xe2\x80\xa8c\x0bd", "cr": "1", "crlf": "2", "last": "end"}


def test_a_blank_line_ends_a_continuation_and_a_bad_unicode_escape_refuses_the_file(
        tmp_path: Path) -> None:
    assert parse_properties(b"a=1\\\n\nb=2\n") == {"a": "1", "b": "2"}
    with pytest.raises(MalformedEscape):
        parse_properties(b"a=\\u12\n")
    conf = tmp_path / "client.conf"
    conf.write_bytes(b"authParams=\\uZZZZ\n")
    with pytest.raises(ConfigError, match=r"client.conf: malformed \\uXXXX escape \(line 1\)"):
        read_properties(conf, "client.conf")


# --- against the JDK -------------------------------------------------------------------------------

JAVA_SOURCE = DATA / "java" / "PropsEcho.java"
JDK = shutil.which("javac") and shutil.which("java")


class JavaProperties:
    """One JVM running PropsEcho: a file's bytes in, what Properties.load made of them out."""

    def __init__(self, classes: Path) -> None:
        self.proc = subprocess.Popen(["java", "-Xshare:auto", "-cp", str(classes), "PropsEcho"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def load(self, data: bytes) -> dict[str, str] | None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(base64.b64encode(data).decode() + "\n")
        self.proc.stdin.flush()
        words = self.proc.stdout.readline().split()
        if words == ["malformed"]:
            return None
        assert words[:1] == ["ok"], words

        def text(h: str) -> str:
            return "".join(chr(int(h[i : i + 4], 16)) for i in range(1, len(h), 4))

        return {text(k): text(v) for k, v in (w.split("=") for w in words[1:])}

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        assert self.proc.stdout is not None
        self.proc.stdout.close()


@pytest.fixture(scope="session")
def java_properties(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaProperties]:
    if not JDK:
        pytest.skip("no JDK (javac/java) on PATH: the differential test against "
                    "java.util.Properties cannot run")
    classes = tmp_path_factory.mktemp("props-echo")
    subprocess.run(["javac", "-d", str(classes), str(JAVA_SOURCE)], check=True)
    jvm = JavaProperties(classes)
    yield jvm
    jvm.close()


#: pieces of properties files where readers disagree: separators, blanks, escapes, comments,
#: continuations, line ends and look-alikes (NEL, U+2028 in UTF-8, VT, NBSP), Latin-1 bytes
PIECES = [b"a", b"key", b"Zz9", b".", b"=", b":", b" ", b"\t", b"\f", b"\\", b"\\\\", b"\\ ",
          b"\\=", b"\\:", b"\\#", b"\\n", b"\\t", b"\\r", b"\\f", b"\\q", b"\\u0041", b"\\u00e9",
          b"\\uD83D", b"\\u12", b"\\uXYZW", b"#", b"!", b"\n", b"\r", b"\r\n", b"\n\r", b"\x85",
          b"\xe2\x80\xa8", b"\x0b", b"\xa0", b"\xe9", b"\xff", b"\x00", b"\x1c"]
FILES = st.one_of(
    st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join),
    st.binary(max_size=60),
)


@pytest.mark.slow  # a JVM subprocess (about a second to start, then ~1 ms a file)
@settings(max_examples=1500, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=FILES)
def test_same_as_java_util_properties(java_properties: JavaProperties, data: bytes) -> None:
    try:
        ours: dict[str, str] | None = parse_properties(data)
    except MalformedEscape:
        ours = None
    assert ours == java_properties.load(data)


@pytest.mark.parametrize("role", ["broker.conf", "client.conf"])
def test_a_binary_file_is_refused_in_one_line(tmp_path: Path, role: str) -> None:
    """Java would load a keystore as properties; lbctl says it is not a conf file at all."""
    path = tmp_path / "x.conf"
    path.write_bytes(b"\x00\x01\xfe loadBalancerEnabled=false\n\x89PNG\x00")
    with pytest.raises(ConfigError, match=rf"x\.conf: not a {role} file: binary") as e:
        read_properties(path, role)
    assert "\n" not in str(e.value)


def test_latin1_text_without_nul_is_still_read_as_java_does(tmp_path: Path) -> None:
    path = tmp_path / "x.conf"
    path.write_bytes(b"garbage line\nk=caf\xe9\n")
    assert read_properties(path, "broker.conf") == {"garbage": "line", "k": "café"}
