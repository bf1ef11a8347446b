"""The one snapshot reader (:mod:`lbctl.sources.snapshot_schema`): JSON bytes decoded straight into
the wire records read exactly what the same document's plain values do, and every refusal gets
the same one-line message either way."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from lbctl.errors import SnapshotError
from lbctl.model.load import NamespaceBundleStats
from lbctl.sources import snapshot
from lbctl.sources.snapshot_schema import (
    LearnedNames,
    decode_snapshot,
    parse_snapshot,
    state_from_wire,
)
from tests.paths import DATA, EXAMPLES

JSON_FILES = sorted([*EXAMPLES.glob("**/*.json"), *(DATA / "valid").glob("*.json")])
MALFORMED = sorted(p for p in (DATA / "malformed").glob("*.json") if p.name != "EXPECTED.json")


@pytest.mark.parametrize("path", JSON_FILES, ids=lambda p: p.name)
def test_same_state_as_the_plain_values(path: Path) -> None:
    data = path.read_bytes()
    doc = decode_snapshot(data)
    assert doc is not None
    assert state_from_wire(doc, path.name) == parse_snapshot(orjson.loads(data), path.name)


_HEAD = b'{"format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": 5, '


def test_stats_are_decoded_as_the_models_values() -> None:
    doc = decode_snapshot(_HEAD + b'"brokers": {"b:8080": {"lastStats": '
                          b'{"t/n/0x00000000_0xffffffff": {"msgRateIn": 5, "topics": 2}}}}}')
    assert doc is not None
    stats = doc.brokers["b:8080"].lastStats
    value = stats["t/n/0x00000000_0xffffffff"]  # type: ignore[index]
    assert type(value) is NamespaceBundleStats
    assert value == NamespaceBundleStats(msgRateIn=5.0, topics=2)
    assert type(value.msgRateIn) is float  # a Java double, as the plain values give


@pytest.mark.parametrize("bad", [
    b'{"msgRateIn": -1}', b'{"msgRateIn": true}', b'{"msgRateIn": "1"}', b'{"msgRateIn": null}',
    b'{"msgRateIn": 1e400}', b'{"consumerCount": 1.0}', b'{"consumerCount": 2147483648}',
    b'{"topics": 9223372036854775808}', b'{"topics": -1}', b'[]', b'1',
])
def test_refuses_what_java_would_not_read(bad: bytes) -> None:
    doc = _HEAD + b'"brokers": {"b:8080": {"lastStats": {"t/n/0x00000000_0xffffffff": ' + bad \
        + b"}}}}"
    assert decode_snapshot(doc) is None
    with pytest.raises(SnapshotError, match=r'^f.json(: not valid JSON| at brokers\["b:8080"\]\.)'):
        snapshot.json_snapshot("f.json", doc)


@pytest.mark.parametrize("data", [b"", b"{", b"[]", b'{"brokers": []}', b'{"brokers": {"b": 1}}',
                                  b'{"a": NaN}', b"\xff\xfe", b'{"brokers": {"b": {"x": }}}',
                                  _HEAD + b'"brokers": {}, "x": "\xff"}'])
def test_refuses_other_shapes(data: bytes) -> None:
    assert decode_snapshot(data) is None


_REPORT = {
    "cpu": {"usage": 10, "limit": 100.0}, "memory": {"usage": -1, "limit": -1},
    "msgRateIn": 1.5, "msgRateOut": 2, "msgThroughputIn": 3.0, "msgThroughputOut": 0,
    "numTopics": 1, "numBundles": 1, "numConsumers": 0, "numProducers": 2,
    "bundles": ["t/n/0x00000000_0x80000000"], "lastBundleGains": [], "lastBundleLosses": [],
    "lastStats": {"t/n/0x00000000_0x80000000": {"msgRateIn": 1}}, "lastUpdate": 17,
    "brokerVersionString": None, "loadManagerClassName": "x", "persistentTopicsEnabled": False,
    "nonPersistentTopicsEnabled": True,
}


def _outcome(doc: object) -> object:
    try:
        return parse_snapshot(doc, "f.json")
    except SnapshotError as e:
        return str(e)


@pytest.mark.parametrize("change", [
    {}, {"unknownKey": [1, 2]}, {"cpu": {"usage": 1, "limit": 2, "other": 3}}, {"cpu": {}},
    {"cpu": None}, {"cpu": {"usage": "1"}}, {"cpu": {"usage": 1e308, "limit": -1e308}},
    {"msgRateIn": -1}, {"msgRateIn": 12345678901234567890123}, {"msgRateIn": True},
    {"numTopics": 2**31}, {"numTopics": 1.0}, {"numBundles": None}, {"lastUpdate": -1},
    {"lastUpdate": 253402300800000}, {"lastUpdate": 1.5}, {"brokerVersionString": 3},
    {"loadManagerClassName": None}, {"persistentTopicsEnabled": 1},
    {"nonPersistentTopicsEnabled": None}, {"bundles": ["t/n/0x80000000_0xffffffff"]},
    {"bundles": [1]}, {"bundles": "x"}, {"lastBundleGains": ["bad"]},
    {"lastBundleLosses": ["t/n/0x00000000_0x80000000", "t/n/0x00000000_0x80000000"]},
    {"lastStats": {"t/n/0x00000000_0x80000000": {"topics": -1}}},
    {"bundleStats": {"t/n/0x00000000_0x80000000": {"msgRateIn": 2}}},
], ids=lambda c: ",".join(f"{k}={v!r}"[:40] for k, v in c.items()) or "as-written")
@pytest.mark.parametrize("drop", [(), ("lastStats",), tuple(_REPORT)])
def test_a_report_reads_as_the_ordinary_reader_reads_it(change: dict[str, object],
                                                         drop: tuple[str, ...]) -> None:
    """A broker report decoded from JSON bytes gives the state or the message its plain values
    give, whatever its keys and values (present, absent, unknown, of a wrong type, out of
    range)."""
    report = {k: v for k, v in _REPORT.items() if k not in drop} | change
    data = json.dumps({"format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": 5,
                       "brokers": {"b:8080": report, "c:8080": {}}}).encode()
    plain = _outcome(orjson.loads(data))
    doc = decode_snapshot(data)
    if doc is None:  # refused: the plain values say why
        assert isinstance(plain, str)
        return
    try:
        decoded: object = state_from_wire(doc, "f.json")
    except SnapshotError as e:
        decoded = str(e)
    assert decoded == plain


def _message(path: Path) -> str:
    with pytest.raises(SnapshotError) as e:
        snapshot.read_snapshot_file(path)
    return str(e.value)


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.name)
def test_hostile_files_get_the_same_message(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every malformed example read as if it were large (no duplicate-key check) fails with the
    same message, but for a key twice."""
    expected = _message(path)
    monkeypatch.setattr(snapshot, "DUPLICATE_CHECK_BYTES", -1)  # as for a large file
    try:
        got = _message(path)
    except pytest.fail.Exception:  # only the duplicate-key check (skipped when large) failed it
        assert "appears twice" in expected
        return
    assert got == expected


def test_a_large_file_reads_the_same(tmp_path: Path) -> None:
    path = EXAMPLES / "hot-broker.json"
    ordinary = snapshot.read_snapshot_file(path)
    big = tmp_path / "big.json"
    doc = json.loads(path.read_text())
    doc["padding"] = "x" * (snapshot.DUPLICATE_CHECK_BYTES + 1)  # an unknown key: ignored
    big.write_text(json.dumps(doc))
    assert [s.brokers for s in snapshot.read_snapshot_file(big)] == [s.brokers for s in ordinary]


# --- the overlap check's shortcuts (_check_disjoint) -----------------------------------------------
def _doc(names_by_broker: dict[str, list[str]]) -> dict[str, object]:
    return {"format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": "2026-01-01T00:00:00Z",
            "brokers": {b: {"lastStats": {n: {"msgRateIn": 1.0} for n in names}}
                        for b, names in names_by_broker.items()}}


def test_namespaces_split_differently_are_not_an_overlap() -> None:
    """The ranges used overall overlap (4 bundles here, 2 there), those of each namespace do not."""
    four = [f"t/a/0x{k << 30:08x}_0x{((k + 1) << 30) - (k == 3):08x}" for k in range(4)]
    two = ["t/b/0x00000000_0x80000000", "t/b/0x80000000_0xffffffff"]
    state = parse_snapshot(_doc({"b1:8080": four[:2] + two[:1], "b2:8080": four[2:] + two[1:]}),
                           "f.json")
    assert state.bundle_count() == 6


@pytest.mark.parametrize("other", ["t/a/0x1", "t/a/0x0"])
def test_overlap_found_when_a_longer_namespace_sorts_in_between(other: str) -> None:
    """A three-part namespace extending a two-part one's name sorts among its bundles."""
    names = ["t/a/0x00000000_0x80000000", "t/a/0x40000000_0xffffffff",
             f"{other}/0x00000000_0x10000000", f"{other}/0x20000000_0x30000000"]
    with pytest.raises(SnapshotError, match="expected bundles of one namespace not to overlap"):
        parse_snapshot(_doc({"b1:8080": names[:2], "b2:8080": names[2:]}), "f.json")


def test_disjoint_with_a_longer_namespace_in_between() -> None:
    names = ["t/a/0x00000000_0x40000000", "t/a/0x40000000_0xffffffff",
             "t/a/0x1/0x00000000_0x10000000", "t/a/0x1/0x08000000_0x30000000"]
    with pytest.raises(SnapshotError, match=r"range 0x08000000_0x30000000 overlaps "
                                            r"0x00000000_0x10000000"):
        parse_snapshot(_doc({"b1:8080": names[:2], "b2:8080": names[2:]}), "f.json")
    names[3] = "t/a/0x1/0x10000000_0x30000000"
    assert parse_snapshot(_doc({"b1:8080": names[:2], "b2:8080": names[2:]}),
                          "f.json").bundle_count() == 4


# --- names learned along a sequence (LearnedNames) -------------------------------------------------
def _wire(names_by_broker: dict[str, list[str]], namespaces: dict[str, list[str]] | None = None
          ) -> Any:
    doc = _doc(names_by_broker)
    if namespaces is not None:
        doc["namespaces"] = {ns: {"boundaries": b} for ns, b in namespaces.items()}
    wire = decode_snapshot(orjson.dumps(doc))
    assert wire is not None
    return wire


def _error(fn: Callable[[], object]) -> str:
    with pytest.raises(SnapshotError) as e:
        fn()
    return str(e.value)


class _CountingPattern:
    """The bundle-name expression, counting the names it is asked about."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.asked = pattern, 0

    def fullmatch(self, name: str) -> re.Match[str] | None:
        self.asked += 1
        return self.pattern.fullmatch(name)


def test_names_learned_in_one_snapshot_are_not_checked_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A sequence's snapshots carry the same ranges: with a ``LearnedNames`` carried along, each
    distinct namespace and range goes through the expression once for the whole sequence, and
    every state is the one read alone."""
    from lbctl.sources import snapshot_schema as schema

    counting = _CountingPattern(schema._BUNDLE_RE)
    monkeypatch.setattr(schema, "_BUNDLE_RE", counting)
    four = [f"t/a/0x{k << 30:08x}_0x{((k + 1) << 30) - (k == 3):08x}" for k in range(4)]
    docs = [_wire({"b1:8080": four[:2], "b2:8080": four[2:]}),
            _wire({"b1:8080": four[:3], "b2:8080": four[3:]}),
            _wire({"b1:8080": four[1:], "b2:8080": four[:1]})]
    alone = [state_from_wire(d, "f.jsonl") for d in docs]
    assert counting.asked == 12  # 4 names, learned again in each snapshot
    counting.asked = 0
    learned = LearnedNames()
    assert [state_from_wire(d, "f.jsonl", learned=learned) for d in docs] == alone
    assert counting.asked == 4
    assert set(learned.ns) == {"t/a"} and len(learned.tails) == 4


def test_what_is_learned_changes_no_refusal() -> None:
    """Carried names do not make an invalid name valid, nor hide a later snapshot's boundaries:
    the same error, in the same words, as the snapshot read alone."""
    learned = LearnedNames()
    state_from_wire(_wire({"b1:8080": ["t/a/0x00000000_0x80000000",
                                       "t/a/0x80000000_0xffffffff"]}), "f.jsonl", learned=learned)
    bad_range = _wire({"b1:8080": ["t/a/0x00000000_0x80000000", "t/a/0x80000000_0x7fffffff"]})
    bad_ns = _wire({"b1:8080": ["t/a/b/c/0x00000000_0x80000000"]})
    bounded = _wire({"b1:8080": ["t/a/0x00000000_0x80000000"]},
                    {"t/a": ["0x00000000", "0x40000000", "0xffffffff"]})
    overlap = _wire({"b1:8080": ["t/a/0x00000000_0x80000000", "t/a/0x40000000_0xffffffff"]})
    for doc in (bad_range, bad_ns, bounded, overlap):
        said = _error(lambda d=doc: state_from_wire(d, "f.jsonl"))
        assert _error(lambda d=doc: state_from_wire(d, "f.jsonl", learned=learned)) == said
    assert "overlaps its boundaries" in _error(lambda: state_from_wire(bounded, "f.jsonl",
                                                                       learned=learned))
