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


@pytest.fixture(scope="module")
def _sandbox():  # type: ignore[no-untyped-def]
    from lbctl.sandbox import hot_cluster

    c = hot_cluster(3)
    yield c
    c.stop()


def _dry_run(c: object, tmp_path: Path, *extra: str) -> tuple[str, dict]:  # type: ignore[type-arg]
    import json

    url = c.admin_url  # type: ignore[attr-defined]
    r = CliRunner().invoke(app, ["--admin-url", url, "recommend", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    plan = tmp_path / "plan.json"
    plan.write_text(r.stdout, encoding="utf-8")
    r = CliRunner().invoke(app, ["--admin-url", url, "apply", str(plan), "--dry-run", *extra],
                           env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.stderr
    j = CliRunner().invoke(app, ["--admin-url", url, "apply", str(plan), "--dry-run", "-o",
                                 "json"], env={"COLUMNS": "80"})
    assert j.exit_code == 0, j.stderr
    return r.stdout, json.loads(j.stdout)


@pytest.mark.live
def test_apply_dry_run_says_once_that_nothing_was_sent(_sandbox: object, tmp_path: Path) -> None:
    """"dry run: nothing was sent" and then "dry-run: 1 would be sent": one line now."""
    out, data = _dry_run(_sandbox, tmp_path)
    said = [x for x in out.splitlines() if "nothing was sent" in x or "would be sent" in x]
    n = len(data["actions"])
    assert said == [f"dry run: nothing was sent ({n} would be sent)"], out


@pytest.mark.live
def test_dry_run_request_lines_fit_80_columns_and_keep_the_request(_sandbox: object,
                                                                   tmp_path: Path) -> None:
    """The request lines ran to ~160 columns (URL and comment on one line). At 80 columns the
    admin URL is named once in the heading and each request breaks only before its query
    string; put back together, each is the request -o json records, whole."""
    out, data = _dry_run(_sandbox, tmp_path)
    lines = out.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("lbctl would send "))
    heading = lines[start]
    assert heading.endswith(f" to {_sandbox.admin_url}:"), heading  # type: ignore[attr-defined]
    block = lines[start + 1:lines.index(next(x for x in lines if x.startswith("dry run")))]
    assert all(len(x) <= 80 for x in block), block
    rebuilt, cur = [], ""
    for x in block:
        s = x.strip()
        if s.startswith("#"):
            rebuilt.append(cur)
            cur = ""
        elif s.startswith(("?", "&")):
            cur += s
        elif not x.startswith("        "):  # not a comment's continuation
            cur = s
    base = _sandbox.admin_url  # type: ignore[attr-defined]
    assert [r.replace(" ", f" {base}", 1) for r in rebuilt] == [
        a["request"] for a in data["actions"]]


@pytest.mark.parametrize("width", [40, 60, 80, 100, 200, 400])
def test_request_lines_never_split_an_identifier(width: int) -> None:
    """Whatever the width, every path segment and query parameter of a request is whole on
    one line, and a line is longer than the width only when one such piece is."""
    from lbctl.executor import request_lines

    base = "http://pulsar-broker-0.pulsar-broker.pulsar.svc.cluster.local:8080"
    items = [(f"PUT {base}/admin/v2/namespaces/acme-payments/settlement-events/"
              "0x7ffffffe_0xaaaaaaa8/unload?destinationBroker=pulsar-broker-2.pulsar-broker."
              "pulsar.svc.cluster.local%3A8080&force=true",
              "#1 unload acme-payments/settlement-events/0x7ffffffe_0xaaaaaaa8 to broker-2"),
             (f"PUT {base}/admin/v2/namespaces/public/default/0x00000000_0x40000000/split"
              "?unload=true  body: [536870912]", "#2 split public/default/0x00000000_0x40000000")]
    lines = request_lines("lbctl would send 2 request(s)", base, items, width)
    text = "\n".join(lines)
    for request, _ in items:
        for piece in re.split(r"(?=[?&])|  body: ", request.removeprefix(f"PUT {base}")):
            assert any(piece.strip() in x for x in lines), (piece, text)
    for x in lines[1:]:
        words = x.split()
        assert len(x) <= width or any(len(w) > width - 8 for w in words), text
    if width >= 400:
        assert lines[1] == f"  {items[0][0]}    # {items[0][1]}"  # whole when it fits


@pytest.mark.parametrize("args", [
    ["unload", "public/default", "-b", "0x00000000_0xzz"],
    ["unload", "public/default", "-b", "public/default/0x00000000_0xzz"],
    ["unload", "public/default", "-b", "0x0_0x4"],
    ["split-bundle", "public/default", "-b", "0xzz"],
    ["explain", str(EXAMPLES / "hot-broker.json"), "-b", "public/default/0xzz_0x1"],
])
def test_a_bad_bundle_range_is_named_once(args: list[str]) -> None:
    """"bad bundle 'X': bad bundle name 'public/default/X': bad bundle range 'X': expected …":
    one line saying it once, naming what was typed."""
    r = CliRunner().invoke(app, ["--admin-url", "http://127.0.0.1:1", *args, "--dry-run"]
                           if args[0] != "explain" else args)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("lbctl: error: "), r.stderr
    typed = args[-1].rpartition("/")[2]
    assert r.stderr.count("bad bundle") == 1 and r.stderr.count(typed) == 1, r.stderr
    assert "0xLLLLLLLL_0xUUUUUUUU" in r.stderr


@pytest.mark.live
def test_a_plan_waiting_for_review_is_information_not_a_warning(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The healer's "plan … waits for review" was `lbctl: warning:`: an SRE grepping the
    service's log for warnings found one for every plan queued as asked (--heal …=approve)."""
    from lbctl.sandbox import hot_cluster

    monkeypatch.chdir(tmp_path)
    c = hot_cluster(3)
    try:
        r = CliRunner().invoke(app, [
            "--admin-url", c.admin_url, "watch", "--history", "wh", "--count", "1",
            "--grace", "out-of-band=0s", "--heal", "out-of-band=approve", "--listen", "",
            "--no-doctor"])
    finally:
        c.stop()
    assert r.exit_code == 0, r.stderr
    waiting = [x for x in r.stderr.splitlines() if "waits for review" in x]
    assert waiting, r.stderr
    assert all(x.startswith("lbctl: healing ") and "warning" not in x for x in waiting)
