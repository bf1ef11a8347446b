"""Version profiles: which release is modelled, and what each release changes.

Each variant is checked against the Pulsar change it cites (PR numbers in ``lbctl/versions.py``);
the table in ``docs/versions.md`` must be the one the module prints.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl import versions
from lbctl.config import Settings, resolve
from lbctl.versions import Version, from_brokers, profile_for
from lbctl.versions import resolve as resolve_version

ROOT = Path(__file__).resolve().parents[1]


def p(v: str) -> versions.Profile:
    return profile_for(Version.parse(v))


def test_parse_versions_like_broker_version_strings() -> None:
    assert Version.parse("3.0.2") == Version(3, 0, 2)
    assert Version.parse("4.0.0-SNAPSHOT") == Version(4, 0, 0)
    assert Version.parse("v3.1") == Version(3, 1, 0)
    assert Version.parse("3.1.4.1-ds") == Version(3, 1, 4)
    with pytest.raises(ValueError):
        Version.parse("latest")


def test_a_line_without_patch_means_its_newest_known_patch() -> None:
    prof = resolve_version("3.0")
    assert prof.version == versions.LINES[(3, 0)] and prof.warning is None
    assert resolve_version("3.0.4").version == Version(3, 0, 4)


def test_unknown_lines_get_the_nearest_profile_and_a_warning() -> None:
    for asked, modelled in (("3.4.0", "3.3"), ("5.0", "4.2"), ("2.9.3", "2.10")):
        prof = resolve_version(asked)
        assert prof.line == modelled
        assert prof.warning and asked in prof.warning


def test_default_is_what_most_brokers_run() -> None:
    text, note = from_brokers({"a": "3.0.2", "b": "3.0.2", "c": "3.1.0-SNAPSHOT"})
    assert text == "3.0.2" and note and "different" in note
    assert from_brokers({"a": None, "b": ""}) == (None, None)
    # a tie goes to the newer release
    assert from_brokers({"a": "3.0.2", "b": "3.3.1"})[0] == "3.3.1"


def test_since_follows_release_lines() -> None:
    """PR #22321 went to 3.0.5, 3.2.3 and 3.3.0; 3.1.x (never patched again) kept the old rule."""
    var = versions.VARIANTS_BY_NAME["transferUnderloadedRule"]
    got = {v: var.value(Version.parse(v)) for v in
           ("3.0.4", "3.0.5", "3.1.3", "3.2.2", "3.2.3", "3.3.0", "4.1.1")}
    assert got == {"3.0.4": "absolute", "3.0.5": "relative", "3.1.3": "absolute",
                   "3.2.2": "absolute", "3.2.3": "relative", "3.3.0": "relative",
                   "4.1.1": "relative"}


@pytest.mark.parametrize(("version", "memory", "direct"), [
    ("2.10.6", 1.0, 1.0), ("3.0.17", 1.0, 1.0),  # 3.0.x LTS kept direct memory at 1.0
    ("3.1.0", 1.0, 1.0), ("3.1.1", 1.0, 0.0),    # PR #21168 in 3.1.1
    ("3.3.9", 1.0, 0.0), ("4.0.0", 0.0, 0.0),    # PR #22820 in 4.0.0
])
def test_resource_weight_defaults(version: str, memory: float, direct: float) -> None:
    s = Settings.defaults(p(version))
    assert s["loadBalancerMemoryResourceWeight"] == memory
    assert s["loadBalancerDirectMemoryResourceWeight"] == direct
    # an explicit value wins over the release's default
    s2 = resolve({"loadBalancerDirectMemoryResourceWeight": 0.5}, profile=p(version))
    assert s2["loadBalancerDirectMemoryResourceWeight"] == 0.5


def test_bandwidth_keys_before_and_after_pip_357() -> None:
    """Before 4.0 only ``loadBalancerBandwith…`` (misspelt) exists: the correct spelling is an
    unknown key to the broker. From 4.0 the new key wins unless it is 1.0 (PR #22824)."""
    conf = {"loadBalancerBandwidthInResourceWeight": 0.3, "loadBalancerBandwithInResourceWeight": 0.6,
            "loadBalancerBandwithOutResourceWeight": 0.2}
    old = resolve(conf, profile=p("3.3.9"))
    new = resolve(conf, profile=p("4.0.0"))
    assert old.bandwidth_in_weight() == 0.6 and new.bandwidth_in_weight() == 0.3
    assert old.bandwidth_out_weight() == new.bandwidth_out_weight() == 0.2


def test_pulsar_system_exclusion_by_release() -> None:
    """``isSystemServiceNamespace`` names ``pulsar/system`` from 2.11.0 (PR #15252)."""
    assert p("2.10.6")["shedPulsarSystem"] is False
    assert p("2.11.0")["shedPulsarSystem"] is True
    assert versions.newest()["shedPulsarSystem"] is True


def test_guava_multimap_buckets_by_release() -> None:
    """Guava 32.0 (Pulsar PR #20459: 2.10.5, 2.11.2, 3.0.1, 3.1+) sizes ``ArrayListMultimap``'s
    map at 16 buckets; the Guava 31 releases before it at 32."""
    assert [p(v)["guavaMultimapBuckets"] for v in ("2.10.4", "2.10.5", "3.0.0", "3.0.1",
                                                   "3.1.0", "4.1.1")] == [32, 16, 32, 16, 16, 16]


def test_avg_shedder_releases() -> None:
    assert [p(v)["avgShedder"] for v in ("3.0.5", "3.0.6", "3.1.3", "3.2.4", "3.3.0", "3.3.1",
                                         "4.0.0")] == [False, True, False, True, False, True, True]
    key = versions.VARIANTS_BY_NAME["avgShedderBindKey"]
    wrong = [v for v in ("3.0.6", "3.0.7", "3.0.8", "3.2.4", "3.3.1", "3.3.2", "3.3.3", "4.0.0")
             if key.value(Version.parse(v)) == "loadBalancerPlacementStrategy"]
    assert wrong == ["3.0.6", "3.0.7", "3.2.4", "3.3.1", "3.3.2"]
    # PR #24954 (the scores compared as doubles): release notes of 4.0.8 and 4.1.2 (2025-11-17)
    # and 4.2.0; the default 4.1.1 predates it, and the 3.x lines keep the (int) comparator
    orders = [p(v)["avgShedderScoreOrder"] for v in ("3.0.17", "3.3.9", "4.0.7", "4.0.8", "4.1.1",
                                                     "4.1.2", "4.1.3", "4.2.0")]
    assert orders == ["int-cast", "int-cast", "int-cast", "double", "int-cast", "double",
                      "double", "double"]


def test_newest_profile_changes_no_default() -> None:
    """lbctl's declared defaults are the default release's: its profile adds nothing; the newest
    release known (4.2.5) has the same setting defaults."""
    assert not versions.newest().differences()
    assert Settings.defaults().profile == versions.newest()
    assert p(str(versions.NEWEST)).setting_defaults() == versions.newest().setting_defaults()


def test_the_default_release_is_the_newest_known() -> None:
    """A run that names no release models the newest release lbctl knows (4.2.5), labelled
    ``newest``; ``4.2`` and ``4.1`` name their newest known patch releases."""
    assert versions.newest().version == versions.DEFAULT == versions.NEWEST == Version(4, 2, 5)
    assert versions.newest().origin == "newest"
    assert resolve_version("4.2").version == Version(4, 2, 5)
    assert resolve_version("4.1").version == Version(4, 1, 3)
    assert resolve_version("4.0").version == Version(4, 0, 14)
    assert resolve_version("4.2.1").warning is None
    chosen, notes = versions.choose(None, {})
    assert chosen.version == Version(4, 2, 5) and not notes


def test_docs_carry_the_table() -> None:
    doc = (ROOT / "docs" / "versions.md").read_text(encoding="utf-8")
    assert versions.markdown_table() in doc, "regenerate: python -m lbctl.versions"


# --- one rule for every command (lbctl.versions.choose) ------------------------------------------
def test_choose_asked_then_brokers_then_newest() -> None:
    p, notes = versions.choose(None, {"a": "3.0.5", "b": "3.0.5", "c": "4.0.4"})
    assert (str(p.version), p.origin) == ("3.0.5", "snapshot")
    assert notes and "different Pulsar versions" in notes[0]
    p, _ = versions.choose("3.3", {"a": "3.0.5"})
    assert (p.line, p.origin) == ("3.3", "--pulsar-version")
    p, notes = versions.choose(None, {"a": None})
    assert p.origin == "newest" and not notes
    with pytest.raises(ValueError):
        versions.choose("not-a-version", {})


def _upgrade(tmp_path: Path) -> Path:
    """examples/hot-broker.json twice: a minute before, every broker on 3.0.5; now on 4.0.4 (a
    rolling upgrade just finished: the leader runs 4.0.4)."""
    import json

    now = json.loads((ROOT / "lbctl" / "examples" / "hot-broker.json").read_text())
    before = json.loads(json.dumps(now))
    before["capturedAt"] = "2026-03-12T14:04:00Z"
    for b in before["brokers"].values():
        b["brokerVersionString"] = "3.0.5"
    path = tmp_path / "upgrade.jsonl"
    path.write_text(json.dumps(before) + "\n" + json.dumps(now) + "\n")
    return path


def test_every_command_models_the_same_release(tmp_path: Path) -> None:
    """recommend, explain, simulate, split-bundle, propose and doctor resolve the release with
    :func:`lbctl.versions.choose` over the latest snapshot's brokers and print it; split-bundle
    modelled the newest release and simulate the first snapshot's before."""
    from tests.cli_cases import run

    seq = str(_upgrade(tmp_path))
    said = {
        "recommend": run(["recommend", seq]).stdout,
        "explain": run(["explain", seq]).stdout,
        "simulate": run(["simulate", seq, "--cycles", "2"]).stdout,
        "split-bundle": run(["split-bundle", "acme/clickstream", "-b", "0xc0000000_0xd0000000",
                             "--snapshot", seq]).stdout,
        "propose": run(["propose", seq, "--solver", "greedy"]).stdout,
        "doctor": run(["doctor", seq]).stdout,
    }
    for cmd, out in said.items():
        assert "Pulsar 4.0.4 (snapshot)" in out or "modelled as Pulsar 4.0.4" in out, cmd
        assert "3.0.5 (snapshot)" not in out, cmd
    asked = run(["split-bundle", "acme/clickstream", "-b", "0xc0000000_0xd0000000",
                 "--snapshot", seq, "--pulsar-version", "3.0.5"]).stdout
    assert "Pulsar 3.0.5 (--pulsar-version)" in asked
