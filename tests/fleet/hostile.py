"""A corpus of awkward snapshot files: each rule of the reader bent one way at a time.

``write_corpus(dir)`` writes one file per case (plus a deep YAML, self-referencing YAML, a
dangling symbolic link and a FIFO when asked). Nothing here says what the verdict is: the oracle
is lbctl's own reader (``read_snapshot_file``); the fleet tests check that ``lbctl fleet ingest``
agrees with it file by file and row by row, whichever path (Spark's JSON reader or lbctl's) a
file takes. Every file is its own cluster sample (cluster ``mut``, one minute apart) unless the
case is about those fields.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

START = "2026-05-01T00:00:00Z"
START_MS = 1777593600000
NS = "t1/ns1"
B = [f"{NS}/0x00000000_0x40000000", f"{NS}/0x40000000_0x80000000",
     f"{NS}/0x80000000_0xc0000000", f"{NS}/0xc0000000_0xffffffff"]


def _stats(rate: float, topics: int = 3) -> dict[str, Any]:
    return {"msgRateIn": rate, "msgThroughputIn": rate * 1000.5, "msgRateOut": rate * 2,
            "msgThroughputOut": rate * 2001.25, "consumerCount": 2, "producerCount": 1,
            "topics": topics, "cacheSize": 0}


def base() -> dict[str, Any]:
    """A valid modular snapshot using most sections."""
    return {
        "format": "lbctl/snapshot@1",
        "cluster": "mut",
        "capturedAt": START,
        "loadManager": "modular",
        "config": {"loadBalancerBrokerOverloadedThresholdPercentage": "80",
                   "loadBalancerNamespaceBundleMaxTopics": 1000,
                   "loadBalancerCPUResourceWeight": 1.5,
                   "loadBalancerSheddingEnabled": True},
        "brokers": {
            "b1:8080": {
                "cpu": {"usage": 71.3, "limit": 400.0},
                "memory": {"usage": 1024.0, "limit": 4096.0},
                "directMemory": {"usage": 10.0, "limit": 4096.0},
                "bandwidthIn": {"usage": 1234.5, "limit": 10000000.0},
                "bandwidthOut": {"usage": 2345.5, "limit": 10000000.0},
                "msgRateIn": 30.0, "msgRateOut": 60.0, "msgThroughputIn": 30015.0,
                "msgThroughputOut": 60037.5, "numTopics": 6, "numBundles": 2,
                "numConsumers": 4, "numProducers": 2,
                "bundles": B[:2],
                "lastBundleGains": [B[1]], "lastBundleLosses": [],
                "lastStats": {B[0]: _stats(10.0), B[1]: _stats(20.0)},
                "lastUpdate": START_MS - 1000, "brokerVersionString": "4.0.1",
                "persistentTopicsEnabled": True, "nonPersistentTopicsEnabled": False,
            },
            "b2:8080": {
                "cpu": {"usage": 5.0, "limit": 100.0},
                "bandwidthIn": {"usage": 10.0, "limit": 1000.0},
                "lastStats": {B[2]: _stats(1.5, 1), B[3]: _stats(0.25, 40)},
            },
        },
        "bundleData": {B[0]: {
            "shortTermData": {"maxSamples": 10, "numSamples": 10, "msgThroughputIn": 900.0,
                              "msgThroughputOut": 1900.0, "msgRateIn": 9.0, "msgRateOut": 19.0},
            "longTermData": {"maxSamples": 1000, "numSamples": 250, "msgThroughputIn": 800.0,
                             "msgThroughputOut": 1800.0, "msgRateIn": 8.0, "msgRateOut": 18.0},
            "topics": 3}},
        "namespaces": {NS: {"boundaries": ["0x00000000", "0x40000000", "0x80000000",
                                           "0xc0000000", "0xffffffff"], "numBundles": 4}},
        "topics": {f"persistent://{NS}/a": {"msgRateIn": 1.0, "msgRateOut": 2.0,
                                            "msgThroughputIn": 10.0, "msgThroughputOut": 20.0,
                                            "producerCount": 1, "consumerCount": 2},
                   "persistent://t2/other/x/y": {"msgRateIn": 3.0}},
        "recentlyUnloaded": {B[3]: START_MS - 60000},
    }


def extensible() -> dict[str, Any]:
    d = base()
    d["loadManager"] = "extensible"
    d["brokerLoadData"] = {"b1:8080": {
        "cpu": {"usage": 60.0, "limit": 100.0}, "msgThroughputIn": 10.0,
        "msgThroughputOut": 20.0, "msgRateIn": 1.0, "msgRateOut": 2.0, "bundleCount": 1,
        "topics": 2, "maxResourceUsage": 0.6, "weightedMaxEMA": 0.55, "msgThroughputEMA": 15.0,
        "updatedAt": START_MS - 5000, "reportedAt": START_MS - 4000,
        "reconstructed": ["weightedMaxEMA"]}}
    d["topBundlesLoadData"] = {"b1:8080": {"topBundlesLoadData": [
        {"bundleName": B[0], "stats": _stats(10.0)}]}}
    d["recentlyUnloadedBrokers"] = {"b2:8080": START_MS - 90000}
    return d


Edit = Callable[[dict[str, Any]], Any]


def _set(path: str, value: Any) -> Edit:
    """Set (or with ``value is DEL`` delete) a key addressed by a dotted path."""

    def edit(d: dict[str, Any]) -> None:
        node: Any = d
        keys = path.split("|")
        for k in keys[:-1]:
            node = node[int(k)] if isinstance(node, list) else node[k]
        last: Any = int(keys[-1]) if isinstance(node, list) else keys[-1]
        if value is DEL:
            del node[last]
        else:
            node[last] = value

    return edit


DEL = object()
B1 = "brokers|b1:8080"
S0 = f"{B1}|lastStats|{B[0]}"

#: dict-level cases: name → edit of a copy of ``base()`` (or of ``extensible()`` for ``x_``)
DICT_CASES: dict[str, Edit] = {
    "valid": lambda d: None,
    "captured_epoch": _set("capturedAt", START_MS),
    "captured_offset": _set("capturedAt", "2026-05-01T05:30:00.123456+05:30"),
    "captured_lower_t_z": _set("capturedAt", "2026-05-01t00:00:00z"),
    "captured_space": _set("capturedAt", "2026-05-01 00:00:00Z"),
    "captured_offset_99_minutes": _set("capturedAt", "2026-05-01T01:39:00+00:99"),
    "captured_feb_30": _set("capturedAt", "2026-02-30T00:00:00Z"),
    "captured_no_offset": _set("capturedAt", "2026-05-01T00:00:00"),
    "captured_hour_24": _set("capturedAt", "2026-05-01T24:00:00Z"),
    "captured_offset_24h": _set("capturedAt", "2026-05-01T00:00:00+24:00"),
    "captured_year_0": _set("capturedAt", "0000-05-01T00:00:00Z"),
    "captured_past_9999": _set("capturedAt", "9999-12-31T23:59:59-01:00"),
    "captured_1969": _set("capturedAt", "1969-12-31T23:59:59Z"),
    "captured_digits_string": _set("capturedAt", str(START_MS)),
    "captured_float": _set("capturedAt", 1.5e12),
    "captured_bool": _set("capturedAt", True),
    "captured_trailing_newline": _set("capturedAt", START + "\n"),
    "captured_unicode_digits": _set("capturedAt", "２０２６-05-01T00:00:00Z"),
    "cluster_number": _set("cluster", 42),
    "cluster_empty": _set("cluster", ""),
    "cluster_digits": _set("cluster", "42"),
    "cluster_true_text": _set("cluster", "true"),
    "cluster_object_text": _set("cluster", '{"a":1}'),
    "cluster_unicode": _set("cluster", "clüster-東京"),
    "cluster_object": _set("cluster", {"a": 1}),
    "format_missing": _set("format", DEL),
    "format_v2": _set("format", "lbctl/snapshot@2"),
    "format_number": _set("format", 1),
    "load_manager_extensible_bare": _set("loadManager", "extensible"),
    "load_manager_other": _set("loadManager", "other"),
    "load_manager_number": _set("loadManager", 5),
    "config_empty": _set("config", {}),
    "config_absent": _set("config", DEL),
    "config_float_for_int": _set("config|loadBalancerNamespaceBundleMaxTopics", 500.0),
    "config_list_setting": _set("config|supportedNamespaceBundleSplitAlgorithms",
                                ["range_equally_divide", "topic_count_equally_divide"]),
    "config_list_with_object": _set("config|x", ["a", {"b": 1}]),
    "config_nested_object": _set("config|x", {"b": 1}),
    "config_bad_known_value": _set("config|loadBalancerBrokerOverloadedThresholdPercentage",
                                   "high"),
    "config_bool_for_int": _set("config|loadBalancerNamespaceBundleMaxTopics", True),
    "config_string_infinity": _set("config|someFloat", "Infinity"),
    "config_not_object": _set("config", ["a"]),
    "config_string": _set("config", "{}"),
    "config_weights": _set("config|loadBalancerBandwidthInResourceWeight", 0.0),
    "namespaces_absent": _set("namespaces", DEL),
    "namespaces_no_boundaries": _set(f"namespaces|{NS}|boundaries", DEL),
    "namespaces_bad_hex": _set(f"namespaces|{NS}|boundaries|1", "0xZZ"),
    "namespaces_unsorted": _set(f"namespaces|{NS}|boundaries|1", "0x90000000"),
    "namespaces_num_mismatch": _set(f"namespaces|{NS}|numBundles", 3),
    "namespaces_three_parts": _set("namespaces|t/c/ns", {"boundaries": ["0x0", "0xffffffff"]}),
    "namespaces_bad_name": _set("namespaces|nons", {"boundaries": ["0x0", "0xffffffff"]}),
    "namespaces_string": _set("namespaces", "x"),
    "brokers_empty": _set("brokers", {}),
    "brokers_missing": _set("brokers", DEL),
    "broker_key_empty": _set("brokers|", {"lastStats": {}}),
    "broker_not_object": _set("brokers|b3:8080", []),
    "broker_no_stats_bundles_only": lambda d: d["brokers"]["b2:8080"].update(
        {"bundles": list(d["brokers"]["b2:8080"].pop("lastStats"))}),
    "broker_bundles_extra": _set(f"{B1}|bundles", [*B[:2], f"{NS}x/0x00000000_0xffffffff"]),
    "broker_bundles_repeated": _set(f"{B1}|bundles", [B[0], B[0], B[1]]),
    "broker_bundles_bad_name": _set(f"{B1}|bundles", [B[0], B[1], "nope"]),
    "broker_bundles_subset": _set(f"{B1}|bundles", [B[0]]),
    "broker_bundles_reordered": _set(f"{B1}|bundles", [B[1], B[0]]),
    "broker_legacy_bundle_stats": lambda d: d["brokers"]["b2:8080"].update(
        bundleStats=d["brokers"]["b2:8080"].pop("lastStats")),
    "broker_both_stats_legacy_bad": _set("brokers|b2:8080|bundleStats", {"bad": 1}),
    "broker_aggregates_absent": lambda d: [d["brokers"]["b1:8080"].pop(k) for k in (
        "msgRateIn", "msgRateOut", "msgThroughputIn", "msgThroughputOut", "numTopics",
        "numBundles", "numConsumers", "numProducers", "bundles")],
    "broker_num_topics_over_int": _set(f"{B1}|numTopics", 2**31),
    "broker_num_topics_float": _set(f"{B1}|numTopics", 6.0),
    "broker_rate_int": _set(f"{B1}|msgRateIn", 30),
    "broker_rate_negative": _set(f"{B1}|msgRateIn", -1),
    "broker_rate_huge_int": _set(f"{B1}|msgRateIn", 99999999999999999999),
    "broker_rate_u64": _set(f"{B1}|msgRateIn", 18446744073709551615),
    "broker_resource_no_limit": _set(f"{B1}|cpu", {"usage": 5.0}),
    "broker_resource_negative": _set(f"{B1}|cpu", {"usage": -1.0, "limit": -1.0}),
    "broker_resource_tiny_limit": _set(f"{B1}|cpu", {"usage": 0.0, "limit": 1e-50}),
    "broker_resource_tiny_limit_usage": _set(f"{B1}|cpu", {"usage": 3.0, "limit": 1e-50}),
    "broker_resource_huge_usage": _set(f"{B1}|cpu", {"usage": 1e300, "limit": 100.0}),
    "broker_resource_string": _set(f"{B1}|cpu", {"usage": "5", "limit": 100.0}),
    "broker_resource_array": _set(f"{B1}|cpu", [5, 100]),
    "broker_version_number": _set(f"{B1}|brokerVersionString", 4),
    "broker_version_digits": _set(f"{B1}|brokerVersionString", "4"),
    "broker_flag_string": _set(f"{B1}|persistentTopicsEnabled", "yes"),
    "broker_last_update_negative": _set(f"{B1}|lastUpdate", -5),
    "broker_last_update_huge": _set(f"{B1}|lastUpdate", 253402300800000),
    "broker_gains_repeated": _set(f"{B1}|lastBundleGains", [B[1], B[1]]),
    "broker_gains_bad_name": _set(f"{B1}|lastBundleGains", ["t/n/0x1_0x2"]),
    "broker_gains_other_broker": _set(f"{B1}|lastBundleGains", [B[3]]),
    "bundle_overlapping": lambda d: d["brokers"]["b2:8080"]["lastStats"].update(
        {f"{NS}/0x80000000_0xa0000000": _stats(1.0)}),
    "bundle_unlisted_namespace": lambda d: d["brokers"]["b2:8080"]["lastStats"].update(
        {"t9/free/0x00000000_0xffffffff": _stats(1.0)}),
    "bundle_upper_hex": lambda d: d["brokers"]["b2:8080"]["lastStats"].update(
        {"t9/free/0x00000000_0xFFFFFFFF": _stats(1.0)}),
    "bundle_reversed": lambda d: d["brokers"]["b2:8080"]["lastStats"].update(
        {"t9/free/0x80000000_0x40000000": _stats(1.0)}),
    "bundle_two_owners": lambda d: d["brokers"]["b2:8080"]["lastStats"].update(
        {B[0]: _stats(1.0)}),
    "bundle_newline_in_name": lambda d: d["brokers"]["b2:8080"]["lastStats"].update(
        {"t9/fr\nee/0x00000000_0xffffffff": _stats(1.0)}),
    "stats_unknown_keys": _set(f"{S0}|extra", {"deep": [1, 2]}),
    "stats_missing_fields": _set(S0, {"msgRateIn": 3.0}),
    "stats_empty": _set(S0, {}),
    "stats_consumers_over_int": _set(f"{S0}|consumerCount", 2**31),
    "stats_cache_big_long": _set(f"{S0}|cacheSize", 2**62),
    "stats_topics_float": _set(f"{S0}|topics", 3.0),
    "stats_rate_nan_string": _set(f"{S0}|msgRateIn", "NaN"),
    "stats_rate_neg_zero": _set(f"{S0}|msgRateIn", -0.0),
    "stats_rate_tiny": _set(f"{S0}|msgRateIn", 5e-324),
    "stats_null": _set(S0, None),
    "stats_rate_null": _set(f"{S0}|msgRateIn", None),
    "bundle_data_missing_long": _set(f"bundleData|{B[0]}|longTermData", DEL),
    "bundle_data_max_zero": _set(f"bundleData|{B[0]}|shortTermData|maxSamples", 0),
    "bundle_data_too_many": _set(f"bundleData|{B[0]}|shortTermData|numSamples", 11),
    "bundle_data_bad_name": _set("bundleData|t1/ns1", {}),
    "bundle_data_topics_negative": _set(f"bundleData|{B[0]}|topics", -1),
    "topics_bad_name": _set("topics|t1/ns1/a", {}),
    "topics_negative": _set(f"topics|persistent://{NS}/a|msgRateIn", -1.0),
    "topics_non_persistent": _set(f"topics|non-persistent://{NS}/np", {"msgRateIn": 2.5}),
    "topics_unowned_namespace": _set("topics|persistent://t8/none/z", {}),
    "topics_owned_no_boundaries": lambda d: (
        d["brokers"]["b2:8080"]["lastStats"].update({"t9/free/0x00000000_0xffffffff": _stats(1)}),
        d["topics"].update({"persistent://t9/free/q": {"msgRateIn": 1.0}})),
    "topics_newline_name": _set("topics|persistent://t1/ns1/a\nb", {}),
    "recently_unloaded_bad_time": _set(f"recentlyUnloaded|{B[3]}", -1),
    "recently_unloaded_bad_name": _set("recentlyUnloaded|x", 5),
    "recently_unloaded_float": _set(f"recentlyUnloaded|{B[3]}", 5.5),
    "x_valid": lambda d: None,
    "x_bld_count_float": _set("brokerLoadData|b1:8080|bundleCount", 1.0),
    "x_bld_resource_null": _set("brokerLoadData|b1:8080|memory", None),
    "x_bld_reconstructed_number": _set("brokerLoadData|b1:8080|reconstructed", [1]),
    "x_bld_reconstructed_text_number": _set("brokerLoadData|b1:8080|reconstructed", ["1"]),
    "x_bld_negative": _set("brokerLoadData|b1:8080|weightedMaxEMA", -0.5),
    "x_bld_not_object": _set("brokerLoadData|b1:8080", [1]),
    "x_bld_updated_long": _set("brokerLoadData|b1:8080|updatedAt", 2**62),
    "x_top_no_slash": _set("topBundlesLoadData|b1:8080|topBundlesLoadData|0|bundleName", "x"),
    "x_top_name_number": _set("topBundlesLoadData|b1:8080|topBundlesLoadData|0|bundleName", 7),
    "x_top_name_object": _set("topBundlesLoadData|b1:8080|topBundlesLoadData|0|bundleName",
                              {"a/b": 1}),
    "x_top_stats_negative": _set(
        "topBundlesLoadData|b1:8080|topBundlesLoadData|0|stats|msgRateIn", -2.0),
    "x_top_stats_absent": _set("topBundlesLoadData|b1:8080|topBundlesLoadData|0|stats", DEL),
    "x_top_item_not_object": _set("topBundlesLoadData|b1:8080|topBundlesLoadData|0", 3),
    "x_top_list_absent": _set("topBundlesLoadData|b1:8080", {}),
    "x_rub_bool": _set("recentlyUnloadedBrokers|b2:8080", True),
    "x_rub_big": _set("recentlyUnloadedBrokers|b2:8080", 2**62),
}


def _line(d: dict[str, Any]) -> bytes:
    return json.dumps(d, ensure_ascii=False).encode()


#: text-level cases: name → (file suffix, bytes from the valid snapshot's compact JSON line)
TEXT_CASES: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "t_pretty_json": (".json", lambda x: json.dumps(json.loads(x), indent=3).encode()),
    "t_bom_json": (".json", lambda x: b"\xef\xbb\xbf" + x),
    "t_bom_jsonl": (".jsonl", lambda x: b"\xef\xbb\xbf" + x + b"\n"),
    "t_bom_second_line": (".jsonl", lambda x: x + b"\n\xef\xbb\xbf" + _shift(x, 1) + b"\n"),
    "t_crlf": (".jsonl", lambda x: x + b"\r\n" + _shift(x, 1) + b"\r\n"),
    # issue 25 item 9: a lone CR is whitespace in JSON Lines, never a record separator
    "t_lone_cr_between_records": (".jsonl", lambda x: x + b"\r" + _shift(x, 1) + b"\n"),
    "t_lone_cr_only": (".jsonl", lambda x: x + b"\r" + _shift(x, 1) + b"\r"),
    "t_lone_cr_as_whitespace": (".jsonl", lambda x: x.replace(b"{", b"{\r", 1) + b"\n"),
    "t_lone_cr_between_records_gz": (".jsonl.gz",
                                     lambda x: gzip.compress(x + b"\r" + _shift(x, 1) + b"\n")),
    "t_blank_lines": (".jsonl", lambda x: b"\n  \n\x0c\n" + x + b"\n\t\n"),
    "t_trailing_garbage": (".json", lambda x: x + b" x"),
    "t_trailing_brace": (".json", lambda x: x + b"}"),
    "t_trailing_bracket": (".json", lambda x: x + b"]"),
    "t_trailing_bracket_object": (".json", lambda x: x + b"][{}"),
    "t_two_objects_json": (".json", lambda x: x + b"\n" + _shift(x, 1)),
    "t_two_objects_one_line": (".jsonl", lambda x: x + _shift(x, 1) + b"\n"),
    "t_comma_object": (".jsonl", lambda x: x + b",{}\n"),
    "t_leading_garbage": (".json", lambda x: b"x" + x),
    "t_nan_literal": (".json", lambda x: x.replace(b'"msgRateIn": 30.0', b'"msgRateIn": NaN')),
    "t_infinity_literal": (".json", lambda x: x.replace(b'"msgRateIn": 30.0',
                                                          b'"msgRateIn": -Infinity')),
    "t_single_quotes": (".json", lambda x: x.replace(b'"format"', b"'format'")),
    "t_comment": (".json", lambda x: b"/* c */" + x),
    "t_trailing_comma": (".json", lambda x: x[:-1] + b",}"),
    "t_leading_zero": (".json", lambda x: x.replace(b'"numTopics": 6', b'"numTopics": 06')),
    "t_plus_sign": (".json", lambda x: x.replace(b'"msgRateIn": 30.0', b'"msgRateIn": +30.0')),
    "t_bad_utf8": (".json", lambda x: x.replace(b'"cluster": "mut"', b'"cluster": "m\xffut"')),
    "t_lone_surrogate": (".json", lambda x: x.replace(b'"cluster": "mut"',
                                                         b'"cluster": "m\\ud800ut"')),
    "t_surrogate_pair": (".json", lambda x: x.replace(b'"cluster": "mut"',
                                                         b'"cluster": "m\\ud83d\\ude00ut"')),
    "t_nul_in_string": (".json", lambda x: x.replace(b'"cluster": "mut"', b'"cluster": "m\x00ut"')),
    "t_escaped_key": (".json", lambda x: x.replace(b'"msgRateIn": 30.0',
                                                      b'"msgRate\\u0049n": 30.5')),
    "t_case_variant_key": (".json", lambda x: x.replace(b'"msgRateIn": 30.0',
                                                           b'"MsgRateIn": -30.0')),
    "t_duplicate_top_key": (".json", lambda x: x[:-1] + b', "cluster": "mut2"}'),
    "t_duplicate_broker": (".json", lambda x: x.replace(
        b'"b2:8080": {', b'"b2:8080": {"cpu": {"usage": 1.0, "limit": 2.0}}, "b2:8080": {', 1)),
    "t_duplicate_stats_key": (".json", lambda x: x.replace(
        b'"lastStats": {', b'"lastStats": {"' + B[0].encode() + b'": {"msgRateIn": 99.0}, ', 1)),
    "t_rate_1e400": (".json", lambda x: x.replace(b'"msgRateIn": 30.0', b'"msgRateIn": 1e400')),
    "t_count_huge": (".json", lambda x: x.replace(b'"numTopics": 6',
                                                     b'"numTopics": 99999999999999999999')),
    "t_null_in_string": (".json", lambda x: x.replace(b'"cluster": "mut"',
                                                         b'"cluster": "mut: null"')),
    "t_deep_unknown_900": (".json", lambda x: x[:-1] + b', "deep": ' + b"[" * 900 + b"]" * 900
                           + b"}"),
    "t_deep_unknown_100000": (".json", lambda x: x[:-1] + b', "brokerLoadData": {"b1:8080": '
                              + b'{"x":' * 100000 + b"{}" + b"}" * 100000 + b"}}"),
    "t_top_level_array": (".json", lambda x: b"[" + x + b"]"),
    "t_top_level_number": (".json", lambda x: b"5"),
    "t_empty": (".json", lambda x: b""),
    "t_whitespace": (".json", lambda x: b" \n\t\n"),
    "t_blank_jsonl": (".jsonl", lambda x: b"\n\n"),
    "t_gzip_named_json": (".json", lambda x: gzip.compress(x)),
    "t_not_gzip": (".json.gz", lambda x: x),
    "t_gzip_jsonl": (".jsonl.gz", lambda x: gzip.compress(x + b"\n")),
    "t_gzip_members": (".jsonl.gz", lambda x: gzip.compress(x + b"\n")
                       + gzip.compress(_shift(x, 1) + b"\n")),
    "t_gzip_truncated": (".jsonl.gz", lambda x: gzip.compress((x + b"\n") * 50)[:-30]),
    "t_gzip_json": (".json.gz", lambda x: gzip.compress(x)),
    "t_mixed_clusters": (".jsonl", lambda x: x + b"\n" + _shift(x, 1).replace(
        b'"cluster": "mut"', b'"cluster": "other"') + b"\n"),
    "t_same_time_twice": (".jsonl", lambda x: x + b"\n" + x + b"\n"),
    "t_weird_name[1]": (".jsonl", lambda x: x + b"\n"),
    "t_weird name:colon": (".jsonl", lambda x: x + b"\n"),
    "t_weird_percent%20#hash": (".jsonl", lambda x: x + b"\n"),
    "t_weird_ünïcode": (".jsonl", lambda x: x + b"\n"),
}


def _shift(line: bytes, minutes: int) -> bytes:
    """The same snapshot ``minutes`` later (another sample of the cluster)."""
    d = json.loads(line)
    d["capturedAt"] = _iso(_ms(d["capturedAt"]) + minutes * 60000)
    return _line(d)


def _ms(text: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def _iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_corpus(root: Path, *, specials: bool = True) -> list[Path]:
    """Write every case under ``root``; returns the files (not the special entries)."""
    root.mkdir(parents=True, exist_ok=True)
    files = []
    minute = 0
    for name, edit in DICT_CASES.items():
        d = extensible() if name.startswith("x_") else base()
        d = copy.deepcopy(d)
        edit(d)
        if "capturedAt" in d and d["capturedAt"] == START:
            d["capturedAt"] = _iso(START_MS + minute * 60000)
        minute += 2
        path = root / "dict" / f"{name}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(_line(d) + b"\n")
        files.append(path)
    for name, (suffix, make) in TEXT_CASES.items():
        d = base()
        d["cluster"] = "text"
        d["capturedAt"] = _iso(START_MS + minute * 60000)
        minute += 2
        path = root / "text" / f"{name}{suffix}"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(make(_line(d).replace(b'"cluster": "text"', b'"cluster": "mut"')))
        files.append(path)
    if specials:
        write_specials(root / "special")
    return files


def write_specials(where: Path) -> None:
    """A YAML nested deeper than libyaml's C stack survives, self-referencing YAML, a dangling
    link and a FIFO — the inputs that used to abort or hang a whole ingest."""
    where.mkdir(parents=True, exist_ok=True)
    d = base()
    d["cluster"] = "special"
    d["capturedAt"] = "2026-05-02T00:00:00Z"
    import yaml

    text = yaml.safe_dump(d)
    (where / "deep.yaml").write_text(text + "brokerLoadData:\n  b1:8080: " + "{x: " * 60000 + "{}"
                                     + "}" * 60000 + "\n")
    (where / "selfref.yaml").write_text(
        "format: lbctl/snapshot@1\ncluster: special\ncapturedAt: 2026-05-02T00:01:00Z\n"
        "brokers: &a\n  b1:8080: *a\n")
    (where / "selfref_config.yaml").write_text(
        "format: lbctl/snapshot@1\ncluster: special\ncapturedAt: 2026-05-02T00:02:00Z\n"
        "config: &c\n  x: [1, *c]\nbrokers: {}\n")
    (where / "ok.yaml").write_text(text)
    os.symlink(where / "nowhere.json", where / "dangling.json")
    os.mkfifo(where / "fifo.json")
