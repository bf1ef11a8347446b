"""walk18's follow-ups to walk17's "left alone" list: explain says the decision before the
Pulsar profile and cuts the profile to what bore on the cycle, monitor-brokers keeps STATE at 80
columns, apply --dry-run says once that nothing was sent, its request lines fit 80 columns, a bad
bundle range is named once, and the healer's "waits for review" is information."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.paths import EXAMPLES


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))
    monkeypatch.setenv("LBCTL_CONTEXTS", str(tmp_path / "contexts.json"))


def _explain(*args: str) -> str:
    r = CliRunner().invoke(app, ["explain", *args], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.stderr
    return r.stdout


def _profile(text: str) -> str:
    """The profile paragraph of an explanation."""
    return text.split("Pulsar profile: ", 1)[1].split("\n\n", 1)[0]


@pytest.mark.parametrize("snapshot", ["hot-broker.json", "extensible/skewed.json",
                                      "avg-shedder.jsonl"])
def test_explain_says_the_decision_before_the_profile(snapshot: str) -> None:
    """A 4.0.x snapshot printed ~40 lines of release variants before "Decision:"."""
    out = _explain(str(EXAMPLES / snapshot))
    assert out.index("\nDecision: ") < out.index("Pulsar profile: ")
    assert out.split("\nDecision: ", 1)[0].count("\n") <= 3  # the cluster and strategy lines


def test_the_short_profile_shows_what_bore_on_the_cycle_and_counts_the_rest() -> None:
    """ThresholdShedder on 4.0.4: AvgShedder's sort and the PIP-380 key did not bear on it."""
    short = _profile(_explain(str(EXAMPLES / "hot-broker.json")))
    assert "avgShedderScoreOrder" not in short and "sheddingExcludedNamespaces" not in short
    hidden = int(re.search(r"(\d+) other way\(s\)", short)[1])  # type: ignore[index]
    full = _profile(_explain(str(EXAMPLES / "hot-broker.json"), "--profile"))
    assert "other way(s)" not in full
    assert len(re.findall(r"^  \w+ = ", full, re.M)) == hidden
    # the same snapshot with AvgShedder: its variants bore on the cycle, and are shown
    avg = _profile(_explain(str(EXAMPLES / "hot-broker.json"), "--strategy", "AvgShedder",
                            "--placement", "AvgShedder"))
    assert "avgShedderScoreOrder = int-cast" in avg
    # lower-boundary shedding switched on: ThresholdShedder's average variant bore on it
    lb = _profile(_explain(str(EXAMPLES / "hot-broker.json"), "--set",
                           "lowerBoundarySheddingEnabled=true"))
    assert "thresholdLowerBoundaryAverage = recomputed" in lb
    assert "lowerBoundarySheddingEnabled = true (--set)" in " ".join(lb.split())


def test_profile_values_are_spelt_as_broker_conf_spells_them() -> None:
    """``sheddingExcludedNamespaces = False``: Python's spelling, not broker.conf's."""
    full = _explain(str(EXAMPLES / "hot-broker.json"), "--profile")
    assert "sheddingExcludedNamespaces = false" in full
    assert not re.search(r"= (True|False)\b", full)
    from lbctl.explain.profile import java

    assert [java(True), java(False), java(("a", "b")), java(0.9)] == ["true", "false", "a,b",
                                                                      "0.9"]
