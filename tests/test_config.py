"""Settings: Pulsar's names, Java types and defaults, value parsing and the precedence of sources.

The expected table below was read field by field from ``ServiceConfiguration.java`` (apache/pulsar,
pulsar-broker-common, commit 0023b9371b309b64aca6f47f03cd05aba78bb280) and, for
``loadBalancerSheddingExcludedNamespaces``, from PIP-380. Blank values follow
``FieldParser.update``/``setEmptyValue``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.config import (
    SETTINGS,
    SETTINGS_BY_NAME,
    Settings,
    closest,
    parse_assignments,
    read_broker_conf,
    resolve,
)
from lbctl.errors import ConfigError, UsageError

DATA = Path(__file__).parent / "data"
IMPL = "org.apache.pulsar.broker.loadbalance.impl."

# name -> (Java type, default) as declared in ServiceConfiguration
PULSAR: dict[str, tuple[str, object]] = {
    "loadBalancerEnabled": ("boolean", True),
    "loadManagerClassName": ("string", IMPL + "ModularLoadManagerImpl"),
    "loadBalancerSheddingEnabled": ("boolean", True),
    "loadBalancerSheddingIntervalMinutes": ("int", 1),
    "loadBalancerSheddingGracePeriodMinutes": ("long", 30),
    "loadBalancerSheddingExcludedNamespaces": ("set", ()),
    "loadBalancerLoadSheddingStrategy": ("string", IMPL + "ThresholdShedder"),
    "loadBalancerLoadPlacementStrategy": ("string", IMPL + "LeastLongTermMessageRate"),
    "loadBalancerPlacementStrategy": ("string", "leastLoadedServer"),  # SimpleLoadManagerImpl
    "loadBalancerReportUpdateThresholdPercentage": ("int", 10),
    "loadBalancerReportUpdateMaxIntervalMinutes": ("int", 15),
    "loadBalancerMaxNumberOfBundlesInBundleLoadReport": ("int", 10),
    "loadBalancerDistributeBundlesEvenlyEnabled": ("boolean", True),
    "loadBalancerBrokerMaxTopics": ("int", 50000),
    "loadBalancerBrokerOverloadedThresholdPercentage": ("int", 85),
    # SimpleLoadManagerImpl (deprecated fields, still read by it)
    "loadBalancerBrokerUnderloadedThresholdPercentage": ("int", 50),
    "loadBalancerBrokerComfortLoadLevelPercentage": ("int", 65),
    "loadBalancerCPUResourceWeight": ("double", 1.0),
    "loadBalancerMemoryResourceWeight": ("double", 0.0),
    "loadBalancerDirectMemoryResourceWeight": ("double", 0.0),
    "loadBalancerBandwidthInResourceWeight": ("double", 1.0),
    "loadBalancerBandwidthOutResourceWeight": ("double", 1.0),
    "loadBalancerBandwithInResourceWeight": ("double", 1.0),
    "loadBalancerBandwithOutResourceWeight": ("double", 1.0),
    "loadBalancerHistoryResourcePercentage": ("double", 0.9),
    "loadBalancerBrokerThresholdShedderPercentage": ("int", 10),
    "loadBalancerBundleUnloadMinThroughputThreshold": ("double", 10.0),
    "lowerBoundarySheddingEnabled": ("boolean", False),
    "loadBalancerAverageResourceUsageDifferenceThresholdPercentage": ("int", 10),
    "loadBalancerMsgRateDifferenceShedderThreshold": ("double", 50.0),
    "loadBalancerMsgThroughputMultiplierDifferenceShedderThreshold": ("double", 4.0),
    "maxUnloadPercentage": ("double", 0.2),
    "minUnloadMessage": ("int", 1000),
    "minUnloadMessageThroughput": ("int", 1024 * 1024),
    "maxUnloadBundleNumPerShedding": ("int", -1),
    "loadBalancerAvgShedderLowThreshold": ("int", 15),
    "loadBalancerAvgShedderHighThreshold": ("int", 40),
    "loadBalancerAvgShedderHitCountLowThreshold": ("int", 8),
    "loadBalancerAvgShedderHitCountHighThreshold": ("int", 2),
    "atLeastOneBundleSelected": ("boolean", True),
    "loadBalancerAutoBundleSplitEnabled": ("boolean", True),
    "loadBalancerAutoUnloadSplitBundlesEnabled": ("boolean", True),
    "loadBalancerNamespaceBundleMaxTopics": ("int", 1000),
    "loadBalancerNamespaceBundleMaxSessions": ("int", 1000),
    "loadBalancerNamespaceBundleMaxMsgRate": ("int", 30000),
    "loadBalancerNamespaceBundleMaxBandwidthMbytes": ("int", 100),
    "loadBalancerNamespaceMaximumBundles": ("int", 128),
    "flowOrQpsDifferenceThresholdPercentage": ("int", 10),
    "defaultNamespaceBundleSplitAlgorithm": ("string", "range_equally_divide"),
    "supportedNamespaceBundleSplitAlgorithms": (
        "list",
        (
            "range_equally_divide",
            "topic_count_equally_divide",
            "specified_positions_divide",
            "flow_or_qps_equally_divide",
        ),
    ),
    "defaultNumberOfNamespaceBundles": ("int", 4),
    "topicBundleAssignmentStrategy": (
        "string",
        "org.apache.pulsar.common.naming.ConsistentHashingTopicBundleAssigner",
    ),
    # extensible load manager (ServiceConfiguration, "Load Balancer Extension")
    "loadBalancerDebugModeEnabled": ("boolean", False),
    "loadBalancerBrokerLoadTargetStd": ("double", 0.25),
    "loadBalancerSheddingConditionHitCountThreshold": ("int", 3),
    "loadBalancerTransferEnabled": ("boolean", True),
    "loadBalancerMaxNumberOfBrokerSheddingPerCycle": ("int", 3),
    "loadBalanceSheddingDelayInSeconds": ("long", 180),
    "loadBalancerBrokerLoadDataTTLInSeconds": ("long", 1800),
    "loadBalancerSheddingBundlesWithPoliciesEnabled": ("boolean", False),
    "loadBalancerReportUpdateMinIntervalMillis": ("int", 5000),
    "loadBalancerSplitIntervalMinutes": ("int", 1),
    "loadBalancerMaxNumberOfBundlesToSplitPerCycle": ("int", 10),
    "loadBalancerNamespaceBundleSplitConditionHitCountThreshold": ("int", 3),
    "preferLaterVersions": ("boolean", False),
    # ServiceConfiguration.failureDomainsEnabled (category "Server")
    "failureDomainsEnabled": ("boolean", False),
}


# --- names, types and defaults -----------------------------------------------------------------


def test_every_setting_matches_service_configuration() -> None:
    assert set(SETTINGS_BY_NAME) == set(PULSAR)
    assert len(SETTINGS) == len(SETTINGS_BY_NAME)  # no duplicate names
    for s in SETTINGS:
        java_type, default = PULSAR[s.name]
        assert (s.name, s.type) == (s.name, java_type)
        assert (s.name, s.default) == (s.name, default)
        assert type(s.default) is type(default), s.name


#: the settings above that ``ServiceConfiguration`` (apache/pulsar 0023b937) does NOT declare
#: ``@FieldContext(dynamic = true)``: ``update-dynamic-config`` refuses them (412), a restart
#: changes them. Every other one is dynamic, ``failureDomainsEnabled`` (category "Server") and
#: ``loadBalancerSheddingExcludedNamespaces`` (PIP-380) included. ``defaultNumberOfNamespaceBundles``
#: became dynamic in later releases; lbctl keeps it static (older releases: see notes).
NOT_DYNAMIC = {
    "loadBalancerEnabled", "loadBalancerPlacementStrategy", "lowerBoundarySheddingEnabled",
    "loadBalancerLoadPlacementStrategy", "loadBalancerBrokerUnderloadedThresholdPercentage",
    "loadBalancerBrokerComfortLoadLevelPercentage", "topicBundleAssignmentStrategy",
    "defaultNumberOfNamespaceBundles", "loadBalancerSplitIntervalMinutes",
}


def test_dynamic_flags_match_service_configuration() -> None:
    assert {s.name for s in SETTINGS if not s.dynamic} == NOT_DYNAMIC


def test_defaults() -> None:
    settings = Settings.defaults()
    assert settings["loadBalancerBrokerThresholdShedderPercentage"] == 10
    assert settings["loadBalancerHistoryResourcePercentage"] == 0.9
    assert settings["loadBalancerLoadSheddingStrategy"] == IMPL + "ThresholdShedder"
    assert settings["lowerBoundarySheddingEnabled"] is False
    assert settings.weights4() == (1.0, 0.0, 1.0, 1.0)
    assert settings.memory_weight() == 0.0
    assert all(settings.origin(name) == "default" for name in settings)
    assert len(settings) == len(SETTINGS)


def test_unknown_key_lookup_suggests_the_closest_name() -> None:
    with pytest.raises(UsageError, match="did you mean loadBalancerSheddingGracePeriodMinutes"):
        Settings.defaults()["loadBalancerSheddingGracePeriodMinute"]


# --- parsing values ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ("false", False), ("TRUE", True), (" False ", False), (True, True)],
)
def test_parse_booleans(raw: object, expected: bool) -> None:
    assert SETTINGS_BY_NAME["lowerBoundarySheddingEnabled"].parse(raw) is expected


@pytest.mark.parametrize("raw", ["yes", "1", "", 1, None])
def test_reject_non_booleans(raw: object) -> None:
    # Pulsar's Boolean.valueOf would silently read these as false; lbctl refuses them
    with pytest.raises(ConfigError, match="lowerBoundarySheddingEnabled: expected true or false"):
        SETTINGS_BY_NAME["lowerBoundarySheddingEnabled"].parse(raw)


def test_parse_integers() -> None:
    pct = SETTINGS_BY_NAME["loadBalancerBrokerThresholdShedderPercentage"]
    assert pct.parse("15") == 15
    assert pct.parse(" 15 ") == 15
    assert pct.parse(15) == 15
    assert pct.parse(15.0) == 15  # a JSON number from the runtime configuration
    assert pct.parse("-1") == -1
    for bad in ("15.5", "ten", "", 15.5, True, "2147483648"):  # the last is beyond a Java int
        with pytest.raises(ConfigError, match="loadBalancerBrokerThresholdShedderPercentage"):
            pct.parse(bad)
    assert pct.parse("2147483647") == 2**31 - 1
    grace = SETTINGS_BY_NAME["loadBalancerSheddingGracePeriodMinutes"]  # a Java long
    assert grace.parse("2147483648") == 2**31
    with pytest.raises(ConfigError):
        grace.parse(str(2**63))


def test_parse_doubles() -> None:
    history = SETTINGS_BY_NAME["loadBalancerHistoryResourcePercentage"]
    assert history.parse("0.9") == 0.9
    assert history.parse("1") == 1.0
    assert isinstance(history.parse(1), float)
    assert history.parse("1e-1") == 0.1
    for bad in ("nan", "inf", "-Infinity", "abc", "", False):
        with pytest.raises(ConfigError, match="expected a finite number"):
            history.parse(bad)


def test_parse_lists_and_sets() -> None:
    algos = SETTINGS_BY_NAME["supportedNamespaceBundleSplitAlgorithms"]
    assert algos.parse("range_equally_divide, topic_count_equally_divide") == (
        "range_equally_divide",
        "topic_count_equally_divide",
    )
    assert algos.parse("[a, b]") == ("a", "b")  # as the runtime configuration prints a collection
    assert algos.parse(["a", " b ", ""]) == ("a", "b")
    assert algos.parse("") == ()
    assert algos.parse("b,a,b") == ("b", "a", "b")  # a List keeps order and duplicates
    excluded = SETTINGS_BY_NAME["loadBalancerSheddingExcludedNamespaces"]
    assert excluded.parse("pulsar/system, public/functions,pulsar/system") == (
        "public/functions",
        "pulsar/system",
    )  # a Set: sorted (TreeSet), duplicates dropped
    with pytest.raises(ConfigError):
        excluded.parse(5)


def test_parse_strings() -> None:
    strategy = SETTINGS_BY_NAME["loadBalancerLoadSheddingStrategy"]
    assert strategy.parse(f" {IMPL}UniformLoadShedder ") == IMPL + "UniformLoadShedder"
    with pytest.raises(ConfigError):
        strategy.parse(3)


# --- precedence ----------------------------------------------------------------------------------


def test_precedence_set_over_broker_conf_over_snapshot_over_default() -> None:
    key = "loadBalancerBrokerThresholdShedderPercentage"
    snapshot = {key: 20, "loadBalancerHistoryResourcePercentage": "0.5", "lowerBoundarySheddingEnabled": True}
    conf = {key: "15", "loadBalancerHistoryResourcePercentage": "0.7"}
    overrides = {key: "5"}

    assert resolve()[key] == 10
    assert resolve(snapshot)[key] == 20
    assert resolve(snapshot, conf)[key] == 15
    settings = resolve(snapshot, conf, overrides)
    assert settings[key] == 5
    assert settings.origin(key) == "--set"
    assert settings["loadBalancerHistoryResourcePercentage"] == 0.7
    assert settings.origin("loadBalancerHistoryResourcePercentage") == "broker.conf"
    assert settings["lowerBoundarySheddingEnabled"] is True
    assert settings.origin("lowerBoundarySheddingEnabled") == "snapshot"
    assert settings["loadBalancerBrokerOverloadedThresholdPercentage"] == 85
    assert settings.origin("loadBalancerBrokerOverloadedThresholdPercentage") == "default"


def test_resolve_labels_sources() -> None:
    settings = resolve({"minUnloadMessage": 10}, {"maxUnloadPercentage": "0.5"},
                       source_names=("snap.json", "/etc/pulsar/broker.conf"))
    assert settings.origin("minUnloadMessage") == "snap.json"
    assert settings.origin("maxUnloadPercentage") == "/etc/pulsar/broker.conf"


def test_snapshot_config_ignores_unknown_keys_and_nulls() -> None:
    # a broker's runtime configuration lists every setting it has, most unrelated to lbctl
    settings = resolve({"clusterName": "prod", "loadBalancerBrokerMaxTopics": None,
                        "loadBalancerOverrideBrokerNicSpeedGbps": "25"})
    assert settings["loadBalancerBrokerMaxTopics"] == 50000
    assert "clusterName" not in settings  # membership neither raises nor counts as a read
    assert "loadBalancerBrokerMaxTopics" in settings
    assert settings.read_values() == {"loadBalancerBrokerMaxTopics": 50000}


def test_bad_value_names_its_source() -> None:
    """A file's bad value is the file's error (exit 1); a bad ``--set`` is the command line's,
    a usage error (exit 2), as an unknown ``--set`` key is (docs/exit-codes.md)."""
    with pytest.raises(ConfigError, match=r"^snapshot: setting maxUnloadPercentage"):
        resolve({"maxUnloadPercentage": "lots"})
    with pytest.raises(UsageError, match=r"^--set: setting minUnloadMessage") as e:
        resolve(overrides={"minUnloadMessage": "1.5"})
    assert e.value.exit_code == 2


def test_unknown_set_key_suggests_the_closest_name() -> None:
    with pytest.raises(UsageError) as err:
        resolve(overrides={"loadBalancerBrokerThresholdShederPercentage": "5"})
    assert "loadBalancerBrokerThresholdShederPercentage" in str(err.value)
    assert "did you mean loadBalancerBrokerThresholdShedderPercentage?" in str(err.value)
    assert err.value.exit_code == 2
    with pytest.raises(UsageError, match="did you mean lowerBoundarySheddingEnabled"):
        resolve(overrides={"lowerboundarysheddingenabled": "true"})  # wrong case
    with pytest.raises(UsageError) as err:
        resolve(overrides={"zzz": "1"})
    assert "did you mean" not in str(err.value)


def test_closest() -> None:
    names = list(SETTINGS_BY_NAME)
    assert closest("maxUnloadPercent", names) == "maxUnloadPercentage"
    assert closest("MAXUNLOADPERCENTAGE", names) == "maxUnloadPercentage"
    assert closest("qwertyuiop", names) is None


def test_parse_assignments() -> None:
    assert parse_assignments(["a=1", " b = x=y "]) == {"a": "1", "b": "x=y"}
    for bad in ("novalue", "=3"):
        with pytest.raises(UsageError, match="--set expects key=value"):
            parse_assignments([bad])


def test_with_values() -> None:
    settings = Settings.defaults().with_values(maxUnloadPercentage="0.5")
    assert settings["maxUnloadPercentage"] == 0.5
    assert settings.origin("maxUnloadPercentage") == "override"
    with pytest.raises(UsageError, match="did you mean maxUnloadPercentage"):
        Settings.defaults().with_values(maxUnloadPercentag="0.5")


# --- the deprecated, misspelt "Bandwith" keys ----------------------------------------------------


@pytest.mark.parametrize(
    ("new", "old", "expected"),
    [
        (None, None, 1.0),  # both default
        (None, "0.5", 0.5),  # only the old key set: it is used
        ("2.0", None, 2.0),  # only the new key set
        ("2.0", "0.5", 2.0),  # both set: the new key wins
        ("1.0", "0.5", 0.5),  # the new key at its default 1.0 does not count as set
        (None, "1.0", 1.0),
        ("0", "0.5", 0.0),  # 0 is a real value of the new key
    ],
)
def test_deprecated_bandwith_fallback(new: str | None, old: str | None, expected: float) -> None:
    """``ServiceConfiguration.getLoadBalancerBandwidthIn/OutResourceWeight``."""
    for direction in ("In", "Out"):
        conf: dict[str, str] = {}
        if new is not None:
            conf[f"loadBalancerBandwidth{direction}ResourceWeight"] = new
        if old is not None:
            conf[f"loadBalancerBandwith{direction}ResourceWeight"] = old
        settings = resolve(broker_conf=conf)
        getter = settings.bandwidth_in_weight if direction == "In" else settings.bandwidth_out_weight
        assert getter() == expected
    settings = resolve(broker_conf={"loadBalancerBandwithOutResourceWeight": "0.25",
                                    "loadBalancerCPUResourceWeight": "0.5"})
    assert settings.weights4() == (0.5, 0.0, 1.0, 0.25)


# --- broker.conf ---------------------------------------------------------------------------------


def test_read_broker_conf() -> None:
    values = read_broker_conf(DATA / "broker.conf")
    # only load-balancer settings lbctl knows, as raw strings
    assert "clusterName" not in values
    assert "metadataStoreUrl" not in values
    assert "loadBalancerHostUsageCheckIntervalMinutes" not in values
    assert "loadBalancerOverrideBrokerNicSpeedGbps" not in values
    assert values["loadBalancerBrokerThresholdShedderPercentage"] == "15"
    assert values["loadBalancerCPUResourceWeight"] == "1.0"  # spaces around '=' are trimmed
    assert values["defaultNumberOfNamespaceBundles"] == "16"
    # a blank scalar keeps Pulsar's default (FieldParser.setEmptyValue leaves primitives alone)
    assert "loadBalancerMaxNumberOfBundlesInBundleLoadReport" not in values

    settings = resolve(broker_conf=values)
    assert settings["loadBalancerBrokerThresholdShedderPercentage"] == 15
    assert settings["loadBalancerHistoryResourcePercentage"] == 0.8
    assert settings["loadBalancerSheddingGracePeriodMinutes"] == 45
    assert settings["lowerBoundarySheddingEnabled"] is True
    assert settings["loadBalancerSheddingExcludedNamespaces"] == ("public/functions", "pulsar/system")
    assert settings["defaultNamespaceBundleSplitAlgorithm"] == "topic_count_equally_divide"
    assert settings["loadBalancerMaxNumberOfBundlesInBundleLoadReport"] == 10
    assert settings.bandwidth_in_weight() == 0.5  # from the deprecated key
    assert settings.bandwidth_out_weight() == 1.0
    assert settings.origin("loadBalancerHistoryResourcePercentage") == "broker.conf"


def test_read_broker_conf_blank_list_is_empty(tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text(
        "supportedNamespaceBundleSplitAlgorithms=\n"
        "loadBalancerBrokerMaxTopics=100\n"
        "loadBalancerBrokerMaxTopics=\n"  # the last line wins, and it is blank
        "! a properties comment\n"
        "minUnloadMessage: 500\n"
    )
    values = read_broker_conf(conf)
    assert values == {"supportedNamespaceBundleSplitAlgorithms": "", "minUnloadMessage": "500"}
    settings = resolve(broker_conf=values)
    assert settings["supportedNamespaceBundleSplitAlgorithms"] == ()
    assert settings["loadBalancerBrokerMaxTopics"] == 50000
    assert settings["minUnloadMessage"] == 500


def test_read_broker_conf_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no such broker.conf file"):
        read_broker_conf(tmp_path / "missing.conf")
    with pytest.raises(ConfigError, match="is a directory"):
        read_broker_conf(tmp_path)
    bad = tmp_path / "broker.conf"
    bad.write_bytes(b"loadBalancerSheddingEnabled=\\u00\n")
    with pytest.raises(ConfigError, match=r"broker.conf: malformed \\uXXXX escape \(line 1\)"):
        read_broker_conf(bad)


@pytest.mark.parametrize(("line", "key"), [
    ("loadBalancerEnabled=maybe", "loadBalancerEnabled"),
    ("loadBalancerBrokerOverloadedThresholdPercentage=abc",
     "loadBalancerBrokerOverloadedThresholdPercentage"),
    ("loadBalancerHistoryResourcePercentage 0.9x", "loadBalancerHistoryResourcePercentage"),
])
def test_a_known_keys_bad_value_names_the_file_and_the_key(tmp_path: Path, line: str,
                                                           key: str) -> None:
    """Found when the file is read (before anything is sent), not later by a merge that knows
    only "broker.conf"."""
    path = tmp_path / "prod-broker.conf"
    path.write_text(f"unrelatedKey=whatever\n{line}\n")
    with pytest.raises(ConfigError) as e:
        read_broker_conf(path)
    assert str(e.value).startswith(f"{path}: broker.conf: setting {key}: expected ")


def test_read_broker_conf_as_java_does(tmp_path: Path) -> None:
    """Issue 25 #2: a blank separator was ignored (recommend planned unloads, doctor missed it);
    bytes are ISO-8859-1, as the broker's Properties.load reads them."""
    conf = tmp_path / "broker.conf"
    conf.write_bytes(b"loadBalancerSheddingEnabled false\n"
                     b"loadBalancerBrokerOverloadedThresholdPercentage \\\n   90\n"
                     b"loadBalancerLoadSheddingStrategy=\xe9\n")
    values = read_broker_conf(conf)
    assert values == {"loadBalancerSheddingEnabled": "false",
                      "loadBalancerBrokerOverloadedThresholdPercentage": "90",
                      "loadBalancerLoadSheddingStrategy": "\xe9"}
    assert resolve(broker_conf=values)["loadBalancerSheddingEnabled"] is False


# --- what was read -------------------------------------------------------------------------------


def test_read_values_records_what_was_read() -> None:
    settings = resolve(broker_conf={"loadBalancerSheddingExcludedNamespaces": "b/b,a/a"})
    assert settings.read_values() == {}
    settings["loadBalancerHistoryResourcePercentage"]
    settings["loadBalancerBrokerThresholdShedderPercentage"]
    settings["loadBalancerBrokerThresholdShedderPercentage"]  # read twice, recorded once
    settings["loadBalancerSheddingExcludedNamespaces"]
    read = settings.read_values()
    # declaration order, not the order of reading; collections as plain lists
    assert list(read) == [
        "loadBalancerSheddingExcludedNamespaces",
        "loadBalancerHistoryResourcePercentage",
        "loadBalancerBrokerThresholdShedderPercentage",
    ]
    assert read["loadBalancerSheddingExcludedNamespaces"] == ["a/a", "b/b"]
    assert read["loadBalancerHistoryResourcePercentage"] == 0.9
    # derived getters read their keys too
    weights = Settings.defaults()
    weights.weights4()
    assert set(weights.read_values()) == {
        "loadBalancerCPUResourceWeight",
        "loadBalancerDirectMemoryResourceWeight",
        "loadBalancerBandwidthInResourceWeight",
        "loadBalancerBandwithInResourceWeight",
        "loadBalancerBandwidthOutResourceWeight",
        "loadBalancerBandwithOutResourceWeight",
    }


# --- the dynamic configuration (update-dynamic-config) beats broker.conf ------------------------
# BrokerService.updateDynamicServiceConfiguration sets the stored values over the ones broker.conf
# gave, at start and on every change (its listener on /admin/configuration); BrokersBase stores
# only fields that are @FieldContext(dynamic = true).


def test_a_dynamic_value_beats_broker_conf_and_set_beats_both() -> None:
    key = "loadBalancerBrokerOverloadedThresholdPercentage"
    assert SETTINGS_BY_NAME[key].dynamic
    s = resolve({key: "85"}, {key: "70"}, dynamic_config={key: "60"})
    assert (s[key], s.origin(key)) == (60, "dynamic config")
    s = resolve({key: "85"}, {key: "70"}, {key: "50"}, dynamic_config={key: "60"})
    assert (s[key], s.origin(key)) == (50, "--set")
    s = resolve({key: "85"}, {key: "70"}, dynamic_config={})
    assert (s[key], s.origin(key)) == (70, "broker.conf")
    s = resolve({key: "85"}, None, dynamic_config={key: 60})
    assert (s[key], s.origin(key)) == (60, "dynamic config")


@pytest.mark.parametrize("key", sorted(s.name for s in SETTINGS if not s.dynamic))
def test_a_stored_value_of_a_setting_that_is_not_dynamic_is_ignored(key: str) -> None:
    setting = SETTINGS_BY_NAME[key]
    stored = {"boolean": "false", "string": "x", "set": "a/b", "list": "a"}.get(setting.type, "7")
    s = resolve(None, None, dynamic_config={key: stored})
    assert s.origin(key) == "default"


def _dynamic_snapshot(tmp_path: Path, dynamic: dict[str, object] | None) -> Path:
    import json

    from tests.paths import EXAMPLES

    doc = json.loads((EXAMPLES / "hot-broker.json").read_text())
    doc.setdefault("config", {})["loadBalancerBrokerThresholdShedderPercentage"] = 10
    if dynamic is not None:
        doc["dynamicConfig"] = dynamic
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(doc))
    return path


def _explain(*args: str) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    r = CliRunner().invoke(app, ["explain", *args], env={"COLUMNS": "200"})
    return r.exit_code, r.stdout, r.stderr


def test_explain_says_a_dynamic_value_beat_broker_conf(tmp_path: Path, monkeypatch:
                                                       pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    conf = tmp_path / "broker.conf"
    conf.write_text("loadBalancerBrokerThresholdShedderPercentage=40\n")
    key = "loadBalancerBrokerThresholdShedderPercentage"
    code, out, err = _explain(str(_dynamic_snapshot(tmp_path, {key: "25"})),
                              "--broker-conf", str(conf))
    assert code == 0, err
    assert f"{key} = 25 (dynamic config)" in out
    code, out, err = _explain(str(_dynamic_snapshot(tmp_path, None)), "--broker-conf", str(conf))
    assert code == 0, err
    assert f"{key} = 40 (broker.conf)" in out
    code, out, err = _explain(str(_dynamic_snapshot(tmp_path, {key: "25"})),
                              "--broker-conf", str(conf), "--set", f"{key}=30")
    assert code == 0, err
    assert f"{key} = 30 (--set)" in out


def test_dynamic_config_round_trips_through_a_snapshot(tmp_path: Path) -> None:
    from lbctl.sources.snapshot import read_snapshots
    from lbctl.sources.snapshot_schema import snapshot_to_wire

    key = "loadBalancerBrokerThresholdShedderPercentage"
    (st,) = read_snapshots([_dynamic_snapshot(tmp_path, {key: "25"})])
    assert dict(st.dynamic_config) == {key: "25"}
    assert snapshot_to_wire(st).dynamicConfig == {key: "25"}
    (bare,) = read_snapshots([_dynamic_snapshot(tmp_path, None)])
    assert not bare.dynamic_config


def test_a_bad_dynamic_value_is_the_snapshots_error(tmp_path: Path, monkeypatch:
                                                    pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    key = "loadBalancerBrokerThresholdShedderPercentage"
    code, out, err = _explain(str(_dynamic_snapshot(tmp_path, {key: "lots"})))
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and f"dynamicConfig.{key}" in err
    assert "Traceback" not in err
