"""Snapshot v1 files: reading, strict validation, writing (``lbctl.sources.snapshot``).

The malformed corpus lives in ``tests/data/malformed`` with ``EXPECTED.json`` mapping each file to a
substring its one-line error must contain; ``tests/data/valid`` holds small valid snapshots.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import stat
import sys
import time
from pathlib import Path
from types import MappingProxyType

import orjson
import pytest

from lbctl.errors import SnapshotError, SnapshotFormatError
from lbctl.model.cluster import ClusterState
from lbctl.model.load import LocalBrokerData, NamespaceBundleStats, ResourceUsage
from lbctl.records import replace
from lbctl.sources import (
    append_snapshot,
    parse_snapshot,
    read_snapshot_file,
    read_snapshots,
    snapshot_to_dict,
    summarize,
    write_snapshot,
    write_snapshots,
)

DATA = Path(__file__).parent.parent / "data"
MALFORMED = DATA / "malformed"
VALID = DATA / "valid"
EXPECTED: dict[str, str] = json.loads((MALFORMED / "EXPECTED.json").read_text("utf-8"))
N = "public/default/"


def same(a: ClusterState, b: ClusterState) -> bool:
    """Equal in every modelled field (``source`` names the file and differs by design)."""
    return replace(a, source="") == replace(b, source="")


def minimal_dict() -> dict:
    return json.loads((VALID / "minimal.json").read_text("utf-8"))


# --------------------------------------------------------------------------------------------
# the malformed corpus
# --------------------------------------------------------------------------------------------
def test_corpus_is_complete():
    files = {p.name for p in MALFORMED.iterdir()} - {"EXPECTED.json"}
    assert files == set(EXPECTED)
    assert len(files) >= 30


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_malformed_file_is_rejected(name):
    path = MALFORMED / name
    with pytest.raises(SnapshotError) as info:
        read_snapshots([path])
    message = str(info.value)
    assert "\n" not in message and "\r" not in message
    assert message.startswith(str(path))
    assert EXPECTED[name] in message


def test_format_errors_carry_file_path_and_expectation():
    with pytest.raises(SnapshotFormatError) as info:
        read_snapshot_file(MALFORMED / "negative_rate.json")
    e = info.value
    assert e.file == str(MALFORMED / "negative_rate.json")
    assert e.path == f'brokers["broker-1:8080"].lastStats["{N}0x00000000_0x40000000"].msgRateIn'
    assert e.expected == "expected a number >= 0, got -1.0"


# --------------------------------------------------------------------------------------------
# valid files
# --------------------------------------------------------------------------------------------
def test_minimal_example_of_the_spec():
    (s,) = read_snapshot_file(VALID / "minimal.json")
    assert s.cluster == "demo"
    assert s.captured_at == 1795298400000  # 2026-11-21T22:00:00Z
    assert s.load_manager == "modular"
    assert s.source == str(VALID / "minimal.json")
    assert list(s.brokers) == ["broker-1:8080", "broker-2:8080"]
    b1 = s.brokers["broker-1:8080"]
    assert b1.cpu == ResourceUsage(80.0, 100.0)
    assert b1.cpu.percent == 80.0
    assert b1.memory == ResourceUsage()  # absent resource: no-arg ResourceUsage
    assert b1.bundles == (f"{N}0x00000000_0x40000000", f"{N}0x40000000_0x80000000")
    assert b1.lastStats[f"{N}0x00000000_0x40000000"] == NamespaceBundleStats(
        3000.0, 31457280.0, 3500.0, 36700160.0, 4, 6, 12, 0
    )
    # aggregates present in the report are kept as given
    assert (b1.msgRateIn, b1.msgRateOut) == (5000.0, 6000.0)
    assert (b1.msgThroughputIn, b1.msgThroughputOut) == (52428800.0, 62914560.0)
    # rates are Java doubles even when the JSON wrote integers
    assert type(b1.msgRateIn) is float
    assert type(b1.lastStats[f"{N}0x00000000_0x40000000"].msgRateIn) is float
    assert s.namespaces == {"public/default": (0, 0x40000000, 0x80000000, 0xC0000000, 0xFFFFFFFF)}
    assert s.config == {
        "loadBalancerLoadSheddingStrategy": "org.apache.pulsar.broker.loadbalance.impl.ThresholdShedder"
    }
    assert s.bundle_data is None
    assert isinstance(s.brokers, MappingProxyType)


def test_missing_aggregates_default_to_local_broker_data_update():
    """broker-2 of the example gives no rates: they are LocalBrokerData.update's sums."""
    (s,) = read_snapshot_file(VALID / "minimal.json")
    b2 = s.brokers["broker-2:8080"]
    assert (b2.msgRateIn, b2.msgRateOut) == (150.0, 150.0)
    assert (b2.msgThroughputIn, b2.msgThroughputOut) == (1572864.0, 1572864.0)
    assert (b2.numTopics, b2.numBundles, b2.numConsumers, b2.numProducers) == (4, 2, 0, 0)
    fresh = LocalBrokerData().with_stats(b2.lastStats)
    for key in (
        "msgRateIn",
        "msgRateOut",
        "msgThroughputIn",
        "msgThroughputOut",
        "numTopics",
        "numBundles",
        "numConsumers",
        "numProducers",
        "bundles",
    ):
        assert getattr(b2, key) == getattr(fresh, key), key
    # gains/losses depend on the previous report: empty, not "everything gained"
    assert b2.lastBundleGains == () and b2.lastBundleLosses == ()


def test_missing_aggregates_sum_left_to_right_like_java():
    d = minimal_dict()
    b = d["brokers"]["broker-2:8080"]
    b.pop("bundles")
    b["lastStats"] = {
        f"{N}0x80000000_0xc0000000": {"msgRateIn": 0.1},
        f"{N}0xc0000000_0xffffffff": {"msgRateIn": 0.2},
    }
    d["brokers"]["broker-2:8080"]["lastStats"][f"{N}0x80000000_0xc0000000"]["msgRateOut"] = 1e16
    d["brokers"]["broker-2:8080"]["lastStats"][f"{N}0xc0000000_0xffffffff"]["msgRateOut"] = 1.0
    s = parse_snapshot(d, "x.json")
    b2 = s.brokers["broker-2:8080"]
    assert b2.msgRateIn == 0.1 + 0.2  # 0.30000000000000004, as Java's double += gives
    assert b2.msgRateOut == 1e16 + 1.0  # == 1e16: naive, not compensated, summation
    assert b2.bundles == (f"{N}0x80000000_0xc0000000", f"{N}0xc0000000_0xffffffff")
    assert b2.numBundles == 2


def test_present_aggregates_are_kept_even_when_inconsistent():
    d = minimal_dict()
    d["brokers"]["broker-2:8080"].update(msgRateIn=1.0, numTopics=99, numBundles=7)
    b2 = parse_snapshot(d, "x.json").brokers["broker-2:8080"]
    assert (b2.msgRateIn, b2.numTopics, b2.numBundles) == (1.0, 99, 7)
    assert b2.msgRateOut == 150.0  # still missing: summed


def test_legacy_bundle_stats():
    (s,) = read_snapshot_file(VALID / "legacy_bundle_stats.json")
    old1 = s.brokers["old-1:8080"]
    assert list(old1.lastStats) == [f"{N}0x00000000_0x40000000", f"{N}0x40000000_0x80000000"]
    assert old1.lastStats[f"{N}0x40000000_0x80000000"] == NamespaceBundleStats(
        0.1, 0.3, 0.2, 0.4, 5, 6, 4, 0
    )
    assert old1.bundles == tuple(old1.lastStats)
    assert old1.msgRateIn == 10.5 + 0.1
    assert (old1.numTopics, old1.numConsumers, old1.numProducers, old1.numBundles) == (7, 6, 8, 2)
    # a report with only a bundle list: owned, no stats, numBundles from the list
    old2 = s.brokers["old-2:8080"]
    assert old2.lastStats == {} and old2.bundles == (f"{N}0x80000000_0xffffffff",)
    assert old2.numBundles == 1 and old2.msgRateIn == 0.0
    assert s.owners()[f"{N}0x80000000_0xffffffff"] == "old-2:8080"
    # "+01:00" offset and milliseconds
    assert s.captured_at_iso == "2026-11-21T21:00:00.250Z"


def test_last_stats_wins_over_legacy_name():
    d = minimal_dict()
    b1 = d["brokers"]["broker-1:8080"]
    b1["bundleStats"] = {"bad name": "ignored: lastStats is present"}
    s = parse_snapshot(d, "x.json")
    assert len(s.brokers["broker-1:8080"].lastStats) == 2


def test_yaml_and_gzip_read_the_same_snapshot():
    (j,) = read_snapshot_file(VALID / "minimal.json")
    (y,) = read_snapshot_file(VALID / "minimal.yaml")
    (g,) = read_snapshot_file(VALID / "minimal.json.gz")
    assert same(j, y) and same(j, g)


def test_gzip_detected_by_magic_bytes(tmp_path):
    p = tmp_path / "compressed-but-named.json"
    p.write_bytes(gzip.compress((VALID / "minimal.json").read_bytes()))
    (s,) = read_snapshot_file(p)
    assert s.cluster == "demo"


def test_full_snapshot_sections():
    (s,) = read_snapshot_file(VALID / "full.json")
    assert s.captured_at == 1763762400123
    b1 = s.brokers["b1:8080"]
    assert b1.lastBundleGains == ("t1/ns1/0x80000000_0xffffffff",)
    assert b1.lastBundleLosses == ("t1/ns1/0x40000000_0x80000000",)
    assert (b1.lastUpdate, b1.brokerVersionString) == (1763762390000, "4.0.1")
    assert b1.nonPersistentTopicsEnabled is False
    assert s.brokers["b2:8080"].lastStats == {} and s.brokers["b2:8080"].bundles == ()
    bd = s.bundle_data["t1/ns1/0x00000000_0x80000000"]
    assert (bd.shortTermData.maxSamples, bd.shortTermData.numSamples) == (10, 10)
    assert (bd.longTermData.maxSamples, bd.longTermData.numSamples) == (1000, 250)
    assert bd.longTermData.msgRateOut == 18.0 and bd.topics == 3
    t = s.topics["persistent://t1/ns1/orders"]
    assert (t.msgRateIn, t.msgRateOut, t.producerCount, t.consumerCount) == (5.0, 6.0, 1, 2)
    assert s.topics["persistent://t1/ns1/events-partition-0"].consumerCount == 0
    assert s.recently_unloaded == {"t1/ns1/0x40000000_0x80000000": 1763762100000}
    # config values kept as given (parsed later by lbctl.config.resolve)
    assert s.config["loadBalancerBrokerThresholdShedderPercentage"] == "10"
    assert s.config["someFutureSetting"] is None


def test_extensible_parts_are_typed_and_written_back_as_given():
    (s,) = read_snapshot_file(VALID / "extensible.json")
    raw = json.loads((VALID / "extensible.json").read_text("utf-8"))
    assert s.load_manager == "extensible"
    assert s.brokers["e1:8080"] == LocalBrokerData()  # empty report: all defaults
    pub = s.broker_load_data["e1:8080"]
    assert pub.has_features and pub.data.weightedMaxEMA == 0.55 and pub.data.cpu.usage == 60.0
    [top] = s.top_bundles_load_data["e1:8080"].bundles
    assert top.bundleName == "pub/ns/0x00000000_0xffffffff" and top.stats.msgThroughputOut == 20.0
    out = snapshot_to_dict(s)
    for key in ("cpu", "msgThroughputIn", "weightedMaxEMA", "updatedAt", "reportedAt"):
        assert out["brokerLoadData"]["e1:8080"][key] == raw["brokerLoadData"]["e1:8080"][key]
    assert out["topBundlesLoadData"] == raw["topBundlesLoadData"]
    assert dict(s.recently_unloaded_brokers) == {"e2:8080": 1763762000000}


def test_unknown_fields_are_ignored():
    d = minimal_dict()
    d["futureSection"] = {"anything": [1, 2, 3]}
    d["brokers"]["broker-1:8080"]["loadReportType"] = "LocalBrokerData"
    d["brokers"]["broker-1:8080"]["lastStats"][f"{N}0x00000000_0x40000000"]["msgBacklog"] = -1
    assert same(parse_snapshot(d, "x.json"), read_snapshot_file(VALID / "minimal.json")[0])


@pytest.mark.parametrize(
    ("text", "epoch_ms"),
    [
        ("2026-11-21T22:00:00Z", 1795298400000),
        ("2026-11-21t22:00:00z", 1795298400000),
        ("2026-11-21 22:00:00Z", 1795298400000),
        ("2026-11-21T23:30:00+01:30", 1795298400000),
        ("2026-11-21T22:00:00.5Z", 1795298400500),
        ("2026-11-21T22:00:00.123987Z", 1795298400123),  # truncated to milliseconds
        ("1970-01-01T00:00:00Z", 0),
        (1795298400000, 1795298400000),
    ],
)
def test_captured_at_forms(text, epoch_ms):
    d = minimal_dict()
    d["capturedAt"] = text
    assert parse_snapshot(d, "x.json").captured_at == epoch_ms


def test_python_json_nan_is_rejected():
    """Python's json module decodes NaN; parse_snapshot must still reject it."""
    d = json.loads(
        (VALID / "minimal.json").read_text("utf-8").replace('"msgRateIn": 100', '"msgRateIn": NaN')
    )
    with pytest.raises(SnapshotFormatError, match=r"msgRateIn: expected a finite number, got NaN"):
        parse_snapshot(d, "x.json")
    d["brokers"]["broker-2:8080"]["lastStats"][f"{N}0x80000000_0xc0000000"]["msgRateIn"] = math.inf
    with pytest.raises(SnapshotFormatError, match="got Infinity"):
        parse_snapshot(d, "x.json")


def test_path_prefix_and_awkward_keys_stay_on_one_line():
    d = minimal_dict()
    d["brokers"]['we"ird\nbroker:1'] = {"cpu": {"usage": "x"}}
    with pytest.raises(SnapshotFormatError) as info:
        parse_snapshot(d, "x.json", path_prefix="snapshots[2]")
    assert info.value.path == 'snapshots[2].brokers["we\\"ird\\nbroker:1"].cpu.usage'
    assert "\n" not in str(info.value)


def test_non_string_bundle_names_are_reported():
    d = minimal_dict()
    stats = d["brokers"]["broker-2:8080"]["lastStats"]
    stats[12] = stats.pop(f"{N}0x80000000_0xc0000000")
    d["brokers"]["broker-2:8080"].pop("bundles")
    with pytest.raises(
        SnapshotFormatError, match=r'\["broker-2:8080"\]\.lastStats\[12\]: expected a bundle name'
    ):
        parse_snapshot(d, "x.yaml")
    d = minimal_dict()
    d["brokers"]["broker-2:8080"]["bundles"].append({"not": "a name"})
    with pytest.raises(
        SnapshotFormatError, match=r"bundles\[2\]: expected a bundle name.*got an object"
    ):
        parse_snapshot(d, "x.json")


def test_overlap_is_checked_only_against_given_boundaries():
    d = minimal_dict()
    d.pop("namespaces")
    b1 = d["brokers"]["broker-1:8080"]
    b1["lastStats"] = {f"{N}0x00000000_0x80000000": b1["lastStats"].popitem()[1]}
    b1["bundles"] = [f"{N}0x00000000_0x80000000"]
    assert parse_snapshot(d, "x.json").bundle_count() == 3
    d["namespaces"] = {"other/ns": {"boundaries": ["0x00000000", "0xffffffff"]}}
    assert parse_snapshot(d, "x.json").namespaces == {"other/ns": (0, 0xFFFFFFFF)}


def test_bundles_listed_without_stats_are_checked_against_boundaries():
    d = minimal_dict()
    d["brokers"]["broker-2:8080"]["bundles"].append(f"{N}0x10000000_0x20000000")
    with pytest.raises(
        SnapshotFormatError, match=r"bundles\[2\]: expected one of the bundle ranges"
    ):
        parse_snapshot(d, "x.json")


# --------------------------------------------------------------------------------------------
# files that cannot be read
# --------------------------------------------------------------------------------------------
def test_missing_file(tmp_path):
    with pytest.raises(SnapshotError, match=r"nope\.json: no such file$"):
        read_snapshots([tmp_path / "nope.json"])


def test_directory(tmp_path):
    d = tmp_path / "dir.json"
    d.mkdir()
    with pytest.raises(SnapshotError, match="is a directory"):
        read_snapshot_file(d)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads everything")
def test_permission_denied(tmp_path):
    p = tmp_path / "secret.json"
    p.write_bytes((VALID / "minimal.json").read_bytes())
    p.chmod(0)
    with pytest.raises(SnapshotError, match="permission denied"):
        read_snapshot_file(p)


def test_utf8_bom_is_accepted(tmp_path):
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + (VALID / "minimal.json").read_bytes())
    assert read_snapshot_file(p)[0].cluster == "demo"


def test_stdin(monkeypatch):
    data = gzip.compress((VALID / "minimal.json").read_bytes())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    (s,) = read_snapshots(["-"])
    assert s.cluster == "demo" and s.source == "<stdin>"


# --------------------------------------------------------------------------------------------
# sequences
# --------------------------------------------------------------------------------------------
def test_jsonl_sequence():
    states = read_snapshot_file(VALID / "sequence.jsonl")
    assert [s.captured_at for s in states] == [1763762400000, 1763762460000, 1763762520000]
    assert [s.source for s in states] == [f"{VALID / 'sequence.jsonl'}:{i}" for i in (1, 2, 3)]
    rates = [s.brokers["a:8080"].lastStats[f"{N}0x00000000_0x80000000"].msgRateIn for s in states]
    assert rates == [100.0, 300.0, 200.0]


def test_files_form_one_sequence_ordered_by_captured_at(tmp_path):
    (base,) = read_snapshot_file(VALID / "minimal.json")
    late = replace(base, captured_at=base.captured_at + 60_000)
    early = replace(base, captured_at=base.captured_at - 60_000)
    tie = replace(base, config=MappingProxyType({"marker": "tie"}))
    write_snapshot(late, tmp_path / "1.json")
    write_snapshots([base, early], tmp_path / "2.jsonl")
    write_snapshot(tie, tmp_path / "3.yaml")
    states = read_snapshots([tmp_path / "1.json", tmp_path / "2.jsonl", tmp_path / "3.yaml"])
    assert [s.captured_at - base.captured_at for s in states] == [-60_000, 0, 0, 60_000]
    # equal times keep the order the files (and lines) were given in: stable
    assert states[1].config == base.config and states[2].config == {"marker": "tie"}
    assert [s.source for s in states] == [
        f"{tmp_path / '2.jsonl'}:2",
        f"{tmp_path / '2.jsonl'}:1",
        str(tmp_path / "3.yaml"),
        str(tmp_path / "1.json"),
    ]


def test_mixed_clusters_across_files(tmp_path):
    (base,) = read_snapshot_file(VALID / "minimal.json")
    write_snapshot(replace(base, cluster="other"), tmp_path / "other.json")
    with pytest.raises(SnapshotError) as info:
        read_snapshots([VALID / "minimal.json", tmp_path / "other.json"])
    message = str(info.value)
    assert message.startswith(str(tmp_path / "other.json"))
    assert 'cluster "other" differs from cluster "demo" of' in message
    assert str(VALID / "minimal.json") in message


def test_empty_sequence():
    assert read_snapshots([]) == []


# --------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------
ROUND_TRIP = [
    "minimal.json",
    "full.json",
    "legacy_bundle_stats.json",
    "extensible.json",
    "minimal.yaml",
]


@pytest.mark.parametrize("source", ROUND_TRIP)
@pytest.mark.parametrize(
    "suffix", [".json", ".yaml", ".yml", ".jsonl", ".json.gz", ".yaml.gz", ".jsonl.gz"]
)
def test_round_trip(tmp_path, source, suffix):
    (original,) = read_snapshot_file(VALID / source)
    target = tmp_path / f"out{suffix}"
    write_snapshot(original, target)
    (again,) = read_snapshot_file(target)
    assert same(again, original)
    assert snapshot_to_dict(again) == snapshot_to_dict(original)
    if suffix.endswith(".gz"):
        assert target.read_bytes()[:2] == b"\x1f\x8b"


def test_round_trip_keeps_float_bits(tmp_path):
    (s,) = read_snapshot_file(VALID / "minimal.json")
    odd = NamespaceBundleStats(0.1 + 0.2, 1e-300, 123456789.123456789, 2.0**60, 1, 2, 3, 2**40)
    b1 = replace(
        s.brokers["broker-1:8080"],
        lastStats=MappingProxyType({f"{N}0x00000000_0x40000000": odd}),
        cpu=ResourceUsage(-1.0, -1.0),
    )
    s = replace(s, brokers=MappingProxyType({**s.brokers, "broker-1:8080": b1}))
    for suffix in (".json", ".yaml"):
        write_snapshot(s, tmp_path / f"x{suffix}")
        (again,) = read_snapshot_file(tmp_path / f"x{suffix}")
        assert same(again, s)


def test_snapshot_to_dict_is_plain_and_parses_back():
    (s,) = read_snapshot_file(VALID / "full.json")
    d = snapshot_to_dict(s)
    assert d["format"] == "lbctl/snapshot@1"
    assert d["capturedAt"] == "2025-11-21T22:00:00.123Z"
    assert d["namespaces"] == {
        "t1/ns1": {"boundaries": ["0x00000000", "0x80000000", "0xffffffff"], "numBundles": 2}
    }
    orjson.dumps(d)  # only JSON types
    assert same(parse_snapshot(d, "d"), s)


def test_write_is_atomic_and_replaces(tmp_path):
    (s,) = read_snapshot_file(VALID / "minimal.json")
    target = tmp_path / "snap.json"
    target.write_text("old content")
    write_snapshot(s, target)
    assert os.listdir(tmp_path) == ["snap.json"]  # no temporary file left behind
    assert read_snapshot_file(target)[0].cluster == "demo"
    mode = stat.S_IMODE(target.stat().st_mode)
    assert mode == 0o600  # a snapshot describes the cluster: private to its owner (issue 12)


def test_write_errors(tmp_path):
    (s,) = read_snapshot_file(VALID / "minimal.json")
    with pytest.raises(SnapshotError, match="cannot write"):
        write_snapshot(s, tmp_path / "missing-dir" / "x.json")
    with pytest.raises(SnapshotError, match="unknown snapshot file type"):
        write_snapshot(s, tmp_path / "x.txt")
    with pytest.raises(SnapshotError, match="use .jsonl for a sequence"):
        write_snapshots([s, s], tmp_path / "x.json")


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_append_snapshot(tmp_path, suffix):
    (s,) = read_snapshot_file(VALID / "minimal.json")
    target = tmp_path / f"seq{suffix}"
    for i in range(3):
        append_snapshot(replace(s, captured_at=s.captured_at + i * 60_000), target)
    states = read_snapshot_file(target)
    assert [x.captured_at - s.captured_at for x in states] == [0, 60_000, 120_000]
    assert all(same(replace(x, captured_at=s.captured_at), s) for x in states)


def test_append_needs_jsonl(tmp_path):
    (s,) = read_snapshot_file(VALID / "minimal.json")
    with pytest.raises(SnapshotError, match="can only append to a .jsonl sequence"):
        append_snapshot(s, tmp_path / "x.json")


def test_summarize():
    (s,) = read_snapshot_file(VALID / "legacy_bundle_stats.json")
    assert summarize(s) == {
        "cluster": "old",
        "capturedAt": "2026-11-21T21:00:00.250Z",
        "brokers": 2,
        "bundles": 3,
        "loadManager": "modular",
    }


# --------------------------------------------------------------------------------------------
# size
# --------------------------------------------------------------------------------------------
def _big_snapshot(brokers: int, bundles_per_broker: int) -> dict:
    per_ns = 16
    seg = 2**32 // per_ns
    bounds = [f"0x{k * seg:08x}" for k in range(per_ns)] + ["0xffffffff"]
    ranges = [f"{a}_{b}" for a, b in zip(bounds, bounds[1:], strict=False)]
    out: dict = {}
    namespaces: dict = {}
    k = 0
    for i in range(brokers):
        stats = {}
        for _ in range(bundles_per_broker):
            ns = f"t{k // per_ns % 7}/ns{k // per_ns}"
            namespaces[ns] = {"boundaries": bounds, "numBundles": per_ns}
            stats[f"{ns}/{ranges[k % per_ns]}"] = {
                "msgRateIn": k * 0.5,
                "msgThroughputIn": k * 512.0,
                "msgRateOut": 1.0,
                "msgThroughputOut": 2.0,
                "consumerCount": 1,
                "producerCount": 1,
                "topics": 3,
                "cacheSize": 0,
            }
            k += 1
        out[f"broker-{i}:8080"] = {"cpu": {"usage": i % 100, "limit": 100}, "lastStats": stats}
    return {
        "format": "lbctl/snapshot@1",
        "cluster": "big",
        "capturedAt": 0,
        "brokers": out,
        "namespaces": namespaces,
    }


@pytest.mark.slow
def test_large_snapshot_loads_quickly(tmp_path):
    p = tmp_path / "big.json"
    p.write_bytes(orjson.dumps(_big_snapshot(200, 100)))
    start = time.perf_counter()
    orjson.loads(p.read_bytes())
    plain = time.perf_counter() - start
    start = time.perf_counter()
    (s,) = read_snapshot_file(p)
    ours = time.perf_counter() - start
    assert s.bundle_count() == 20_000
    assert s.brokers["broker-3:8080"].numBundles == 100
    # generous: validation costs a few times orjson.loads (about 2.5x on 200,000 bundles)
    assert ours < 20 * plain + 0.5
