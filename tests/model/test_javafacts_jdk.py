"""The figures lbctl computes as Java does, against the JDK on random inputs (hypothesis).

``Math.round`` (``NamespaceBundleStats.compareTo`` since PR #24772 rounds throughputs to their
resolution: :func:`lbctl.model.brokerload.java_round`), the ``(float)`` narrowing and
``ResourceUsage.percentUsage()``'s float expression (:func:`lbctl.model.load.f32`, the percent
every shedder and placement strategy reads), the ``(int)`` and ``(long)`` casts
(:func:`lbctl.model.javaint.d2i`, :func:`lbctl.strategies.simple.ranking.java_long`),
``String.hashCode`` over any text, astral characters included (:func:`java_string_hash`: every
hash-map order), and the sign of ``String.compareTo`` (the order inside a tree bin).
``java/NumberFacts.java`` (plain JDK, no Pulsar) runs as one process for the module. Skipped,
with the reason shown by ``pytest -rs``, without ``javac``/``java``."""

from __future__ import annotations

import math
import struct
import subprocess
from collections.abc import Callable, Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.model.brokerload import java_round
from lbctl.model.javaint import d2i
from lbctl.model.javaorder import _utf16, java_string_hash
from lbctl.model.load import _percent_of, f32
from lbctl.strategies.simple.ranking import java_long
from tests.jdk import JAVA_DIR, needs_jdk

pytestmark = needs_jdk("Java's number and string facts are not checked against the JDK")

Ask = Callable[[Sequence[str]], list[str]]


@pytest.fixture(scope="module")
def jdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ask]:
    build = tmp_path_factory.mktemp("numberfacts")
    subprocess.run(["javac", "-d", str(build), str(JAVA_DIR / "NumberFacts.java")], check=True,
                   capture_output=True)
    proc = subprocess.Popen(["java", "-cp", str(build), "NumberFacts"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, encoding="utf-8")
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def ask(lines: Sequence[str]) -> list[str]:
        stdin.write("\n".join([*lines, "END"]) + "\n")
        stdin.flush()
        out: list[str] = []
        while (line := stdout.readline().rstrip("\n")) != "END":
            assert line, "NumberFacts ended early"
            out.append(line)
        return out

    yield ask
    stdin.close()
    proc.wait(timeout=30)
    stdout.close()


def _d(x: float) -> str:
    """``x`` as ``Double.parseDouble`` reads it, bit for bit."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x.hex()


def _bits(x: float) -> int:
    return int(struct.unpack(">i", struct.pack(">f", x))[0])


#: doubles near the edges: halves (Math.round's ties), 2^52 and beyond, int and long limits,
#: float's largest and its rounding boundary, subnormals, signed zeros, NaN and infinities
edges = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**54), 2**54).map(lambda n: n + 0.5),
    st.integers(-(2**12), 2**12).map(lambda n: n / 8),
    st.sampled_from([0.49999999999999994, -0.49999999999999994, 2.0**52 + 1, 2.0**53 + 2,
                     2.0**31 - 0.5, -(2.0**31) - 0.5, 2.0**63, -(2.0**63), 2.0**63 - 1024,
                     3.4028234663852886e38, 3.4028235677973366e38, 3.402823567797337e38,
                     1.401298464324817e-45, 7.006492321624085e-46, 5e-324, -0.0]),
)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(edges)
def test_rounding_and_casts_match_the_jdk(jdk: Ask, x: float) -> None:
    rnd, bits, as_int, as_long = jdk([f"ROUND\t{_d(x)}", f"F32\t{_d(x)}", f"D2I\t{_d(x)}",
                                      f"D2L\t{_d(x)}"])
    assert java_round(x) == int(rnd)
    narrowed = f32(x)
    assert (math.isnan(narrowed) and math.isnan(x)) or _bits(narrowed) == int(bits)
    assert d2i(x) == int(as_int)
    assert java_long(x) == int(as_long)


usages = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.floats(0, 1e6), st.integers(0, 10**12).map(float),
                   st.sampled_from([1e-50, -1e-50, 3.5e38, 1e-46, 0.0, -0.0]))


@settings(derandomize=True, max_examples=400, deadline=None)
@given(usages, usages)
def test_percent_usage_matches_the_jdk(jdk: Ask, usage: float, limit: float) -> None:
    """``ResourceUsage.percentUsage()``: a float division of the narrowed figures when the
    limit (a double) is positive; a limit that narrows to 0 divides by zero in float."""
    (bits,) = jdk([f"PCT\t{_d(usage)}\t{_d(limit)}"])
    ours = _percent_of(usage, limit)
    assert (math.isnan(ours) and (int(bits) & 0x7FFFFFFF) > 0x7F800000) or \
        _bits(ours) == int(bits)


#: any text a line can carry (no TAB or line break), astral characters included
texts = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\t\n\r"),
                max_size=40)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(texts, texts)
def test_string_hash_and_compare_match_the_jdk(jdk: Ask, a: str, b: str) -> None:
    ha, hb, cmp = jdk([f"HASH\t{a}", f"HASH\t{b}", f"CMP\t{a}\t{b}"])
    for s, h in ((a, ha), (b, hb)):
        ours = java_string_hash(s)
        assert (ours - (1 << 32) if ours & 0x80000000 else ours) == int(h), s
    ka, kb = _utf16(a), _utf16(b)
    assert (ka > kb) - (ka < kb) == int(cmp)
