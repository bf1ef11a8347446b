"""`lbctl explain` on a large cycle says what changed: a broker's many skipped bundles counted by
reason, a filter's long list of removed brokers cut, a placement's scores those of the best;
``--broker`` / ``--bundle`` still print every one of them."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from lbctl.cli.app import app
from lbctl.explain.modular import LIST_LIMIT

BROKERS = 60
PER_NS = 32


def _write(path: Path, stats: list[dict[str, dict[str, float]]],
           cpu_of: Callable[[int], float]) -> None:
    """A snapshot of brokers ``broker-NN:8080`` carrying ``stats``, broker ``i`` at ``cpu_of(i)`` %
    (called in broker order)."""
    brokers = {}
    for i, st in enumerate(stats):
        cpu = cpu_of(i)
        brokers[f"broker-{i:02d}:8080"] = {
            "cpu": {"usage": cpu, "limit": 100.0}, "memory": {"usage": 1.0, "limit": 4.0},
            "bandwidthIn": {"usage": cpu, "limit": 100.0},
            "bandwidthOut": {"usage": cpu, "limit": 100.0}, "lastStats": st}
    path.write_text(json.dumps({"format": "lbctl/snapshot@1", "cluster": "c",
                                "capturedAt": "2026-01-01T00:00:00Z", "brokers": brokers}))


def snapshot(path: Path) -> None:
    """60 brokers, 64 namespaces of 32 bundles dealt round-robin; one broker in ten hot."""
    rng = random.Random(3)
    seg = (1 << 32) // PER_NS
    bounds = [f"0x{k * seg:08x}" for k in range(PER_NS)] + ["0xffffffff"]
    stats: list[dict[str, dict[str, float]]] = [{} for _ in range(BROKERS)]
    n = 0
    for ns in range(64):
        for k in range(PER_NS):
            rate = rng.uniform(10, 2000)
            stats[n % BROKERS][f"t/ns-{ns}/{bounds[k]}_{bounds[k + 1]}"] = {
                "msgRateIn": rate, "msgRateOut": rate, "msgThroughputIn": rate * 1000,
                "msgThroughputOut": rate * 1000, "topics": 1}
            n += 1
    _write(path, stats, lambda i: 92.0 if i % 10 == 3 else rng.uniform(30, 50))


def test_whole_cycle_counts_what_is_long(runner, tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    snapshot(f)
    whole = runner.invoke(app, ["explain", str(f), "--wide"])
    assert whole.exit_code == 0, whole.output
    text = whole.stdout
    assert "bundle(s) on broker-03:8080: not needed:" in text
    assert f"(`lbctl explain {f} --broker broker-03:8080` lists each of them)" in text
    assert "brokers scored (" in text and ": every score)" in text
    narrowed = runner.invoke(app, ["explain", str(f), "--wide", "--broker", "broker-03:8080"])
    assert narrowed.exit_code == 0, narrowed.output
    skipped = narrowed.stdout.count("[skipped]")
    assert skipped > LIST_LIMIT  # each one listed
    assert "bundle(s) on" not in narrowed.stdout
    assert len(text) < 40 * len(narrowed.stdout)


def test_one_bundle_shows_every_score(runner, tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    snapshot(f)
    plan = json.loads(runner.invoke(app, ["recommend", str(f), "-o", "json"]).stdout)
    bundle = plan["actions"][0]["bundle"]
    res = runner.invoke(app, ["explain", str(f), "--wide", "--bundle", bundle])
    assert res.exit_code == 0, res.output
    assert "brokers scored" not in res.stdout
    assert res.stdout.count("=") > LIST_LIMIT  # every candidate's score


def _explained(runner, f: Path, *args: str) -> dict:
    return _json(runner, f, *args)["explanation"]


def test_json_whole_cycle_counts_what_is_long(runner, tmp_path: Path) -> None:
    """The JSON follows the text's rule: a placement over 60 brokers is cut to counts, the best
    scores and the pick; a broker's many skipped bundles are counted by reason."""
    f = tmp_path / "s.json"
    snapshot(f)
    e = _explained(runner, f)
    assert "narrowedTo" not in e
    placement = e["outcomes"][0]["placement"]
    assert placement["more"].startswith(f"lbctl explain {f} --bundle ")
    for step in placement["filters"]:
        assert "before" not in step and step["beforeCount"] >= step["afterCount"]
        removed = step["beforeCount"] - step["afterCount"]
        assert removed == step.get("removedCount", 0)
        assert len(step.get("removed", [])) in (0, removed)
    dec = placement["decision"]
    assert "candidates" not in dec and dec["scoredCount"] > LIST_LIMIT
    assert dec["broker"] in dec["scores"] and len(dec["scores"]) <= len(dec["best"]) + 1
    counted = [s for s in e["skippedCandidates"] if s["broker"] == "broker-03:8080"]
    assert counted and all(s["count"] > 0 for s in counted)
    listed = [c for c in e["candidates"] if c["broker"] == "broker-03:8080"]
    assert all(c["chosen"] for c in listed)  # its skipped ones are counted, not listed


def test_json_narrowed_writes_everything(runner, tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    snapshot(f)
    whole = _explained(runner, f)
    bundle = whole["outcomes"][0]["bundle"]
    e = _explained(runner, f, "--bundle", bundle)
    assert e["narrowedTo"] == {"broker": None, "bundle": bundle}
    assert [o["bundle"] for o in e["outcomes"]] == [bundle]
    placement = e["outcomes"][0]["placement"]
    assert "more" not in placement
    first = placement["filters"][0]
    assert len(first["before"]) == BROKERS  # every name
    assert len(placement["decision"]["scores"]) == len(placement["decision"]["candidates"])
    assert placement["decision"]["scores"].keys() >= set(whole["outcomes"][0]["placement"]
                                                         ["decision"]["scores"])
    e = _explained(runner, f, "--broker", "broker-03:8080")
    assert "skippedCandidates" not in e
    mine = e["candidates"]
    assert {c["broker"] for c in mine} == {"broker-03:8080"}
    assert sum(not c["chosen"] for c in mine) == sum(
        s["count"] for s in whole["skippedCandidates"] if s["broker"] == "broker-03:8080")


def test_candidate_views_decide_as_tuples(runner, tmp_path: Path, monkeypatch) -> None:
    """The planner hands placement a candidate list without a namespace's owners as a view
    (``Excluding``); with plain tuples instead, every plan, pick, score and reason is the same."""
    from lbctl.loadmanager import modular
    from lbctl.strategies.placement import filters

    f = tmp_path / "s.json"
    snapshot(f)

    def outputs() -> list[str]:
        plan = runner.invoke(app, ["recommend", str(f), "-o", "json"])
        whole = runner.invoke(app, ["explain", str(f), "-o", "json"])
        bundles = [a["bundle"] for a in json.loads(plan.stdout)["actions"]][:4]
        narrowed = [runner.invoke(app, ["explain", str(f), "-o", "json", "--bundle", b]).stdout
                    for b in bundles]
        text = runner.invoke(app, ["explain", str(f), "--wide"])
        return [plan.stdout, whole.stdout, *narrowed, text.stdout]

    with_views = outputs()
    monkeypatch.setattr(modular, "remove_most_servicing",
                        lambda c, ns, index, steps, members=None:
                        filters.remove_most_servicing(c, ns, index, steps))
    assert outputs() == with_views
    assert json.loads(with_views[0])["actions"]  # something was placed


def deep_snapshot(path: Path) -> None:
    """10 brokers; broker-00 owns 600 of 690 bundles and is hot: it sheds many small bundles."""
    rng = random.Random(5)
    seg = (1 << 32) // PER_NS
    bounds = [f"0x{k * seg:08x}" for k in range(PER_NS)] + ["0xffffffff"]
    stats: list[dict[str, dict[str, float]]] = [{} for _ in range(10)]
    for n in range(690):
        ns, k = divmod(n, PER_NS)
        rate = rng.uniform(10, 20)
        owner = 0 if n < 600 else 1 + n % 9
        stats[owner][f"t/ns-{ns}/{bounds[k]}_{bounds[k + 1]}"] = {
            "msgRateIn": rate, "msgRateOut": rate, "msgThroughputIn": rate * 10_000,
            "msgThroughputOut": rate * 10_000, "topics": 1}
    _write(path, stats, lambda i: 95.0 if i == 0 else rng.uniform(30, 40))


def test_json_many_placements_on_few_brokers_are_cut(runner, tmp_path: Path) -> None:
    """Issue 30: one deep broker shedding thousands of bundles over 20 brokers wrote every
    placement whole (65 MB: unloads × brokers). More than LIST_LIMIT placements in the cycle:
    each is cut to counts, however few the brokers; ``--bundle`` still writes one whole."""
    f = tmp_path / "deep.json"
    deep_snapshot(f)
    e = _explained(runner, f)
    placed = [o for o in e["outcomes"] if o["placement"] is not None]
    assert len(e["outcomes"]) > LIST_LIMIT and placed
    for o in placed:
        p = o["placement"]
        assert p["more"] == f"lbctl explain {f} --bundle {o['bundle']} -o json"
        assert all("before" not in s and "beforeCount" in s for s in p["filters"])
        assert "candidates" not in p["decision"]
    one = _explained(runner, f, "--bundle", placed[0]["bundle"])["outcomes"][0]["placement"]
    assert "more" not in one and len(one["filters"][0]["before"]) == 10
    assert len(one["decision"]["scores"]) == len(one["decision"]["candidates"])


# --- --page / --limit (issue 30: one broker shedding 24,000 bundles wrote 55 MB) -------------------
def _json(runner, f: Path, *args: str) -> dict:
    res = runner.invoke(app, ["explain", str(f), "-o", "json", *args])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_json_long_lists_come_a_page_at_a_time(runner, tmp_path: Path) -> None:
    """Every list longer than --limit holds one page; the pages together are the whole list
    (--limit 0), in order; lists that fit a page are written whole on every page."""
    f = tmp_path / "s.json"
    snapshot(f)
    whole = _json(runner, f, "--limit", "0")
    assert "page" not in whole
    unloads = len(whole["actions"])
    assert unloads > 10
    first = _json(runner, f, "--limit", "10")
    page = first["page"]
    assert page["number"] == 1 and page["limit"] == 10
    assert page["lists"]["actions"] == unloads
    assert page["lists"]["brokers"] == BROKERS
    assert page["pages"] == -(-BROKERS // 10)  # the longest list: 60 brokers
    assert first["summary"] == whole["summary"]  # counted over the whole plan
    assert first["settings"] == whole["settings"] and first["warnings"] == whole["warnings"]
    actions, outcomes, brokers = [], [], []
    for n in range(1, page["pages"] + 1):
        doc = _json(runner, f, "--limit", "10", "--page", str(n))
        assert doc["page"]["number"] == n
        assert len(doc["actions"]) <= 10 and len(doc["explanation"]["outcomes"]) <= 10
        assert doc["explanation"]["skippedCandidates"] == whole["explanation"]["skippedCandidates"]
        actions += doc["actions"]
        outcomes += doc["explanation"]["outcomes"]
        brokers += doc["brokers"]
    assert actions == whole["actions"]
    assert outcomes == whole["explanation"]["outcomes"]
    assert brokers == whole["brokers"]


def test_default_page_cuts_a_large_explanation(runner, tmp_path: Path) -> None:
    """The default limit: the unloads are paged once there are more than it; a page past the
    last is one clear line and exit 2."""
    f = tmp_path / "s.json"
    snapshot(f)
    from lbctl.explain.paging import DEFAULT_LIMIT

    doc = _json(runner, f)
    assert len(doc["actions"]) <= DEFAULT_LIMIT
    if doc["summary"]["unloads"] <= DEFAULT_LIMIT:
        assert "page" not in doc
    res = runner.invoke(app, ["explain", str(f), "--limit", "10", "--page", "99"])
    assert res.exit_code == 2
    assert "--page 99: the explanation has 6 page(s) of 10" in res.output
    assert "Traceback" not in res.output


def test_text_pages_as_the_json_does(runner, tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    snapshot(f)
    doc = _json(runner, f, "--limit", "10", "--page", "2")
    res = runner.invoke(app, ["explain", str(f), "--wide", "--limit", "10", "--page", "2"])
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert "Page 2 of 6: lists longer than 10 show 10 items a page" in text
    assert "--page 3 for the next" in text
    unloads = text.split("\nUnloads:\n", 1)[1]
    shown = [o["bundle"] for o in doc["explanation"]["outcomes"]]
    assert [line.split(":")[0].strip() for line in unloads.splitlines()
            if line.startswith("  ") and " -> " in line and not line.startswith("   ")] == shown
    assert sum(1 for line in text.splitlines() if "usage " in line and "won by" in line) == 10


def test_extensible_lists_and_previews_are_cut(runner, tmp_path: Path) -> None:
    """The extensible load manager's per-broker and per-bundle lists are paged, and an unload's
    placement preview over 59 brokers keeps its counts, the best and the pick."""
    f = tmp_path / "s.json"
    snapshot(f)
    args = ["--strategy", "TransferShedder", "--assume-steady", "--set",
            "loadBalancerTransferEnabled=false"]
    whole = _json(runner, f, *args, "--limit", "0")
    paged = _json(runner, f, *args, "--limit", "10")
    e, w = paged["explanation"], whole["explanation"]
    assert paged["page"]["lists"]["explanation.splits"] == len(w["splits"]) > 10
    assert e["splits"] == w["splits"][:10]
    assert e["brokers"] == w["brokers"][:10]
    preview = w["placementPreview"][0]
    assert preview["scoredCount"] == BROKERS - 1 and "candidates" not in preview
    assert preview["broker"] in preview["scores"]
    assert set(preview["scores"]) <= {*preview["best"], preview["broker"]}
