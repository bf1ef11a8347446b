"""walk19's follow-ups to walk18's "left alone" list: apply's plan line and per-action rows fit
the terminal with every identifier whole, the note under a table wraps to the width, and the
healer's "nothing queued" and "applied" lines are information, not warnings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lbctl.loadmanager.select import Options, run
from lbctl.sources.files import snapshot_files
from lbctl.watch.anomalies import Condition, Tracker
from lbctl.watch.heal import Healer
from lbctl.watch.plans import PlanMeta, PlanQueue
from tests.paths import EXAMPLES

# --- the healer: information is not a warning -------------------------------------------------


class _NoPlan:
    """A plan that moves nothing (what a balanced capture gives)."""

    actions: list[Any] = []

    def to_wire(self) -> dict[str, Any]:
        return {}


class _Quiet(Healer):
    def plan_for(self, state: Any, settings: Any, cycle_plan: Any) -> tuple[Any, str]:
        return _NoPlan(), "propose"


def _healer(kind: type[Healer], tmp_path: Path, mode: str,
            apply: Callable[[PlanMeta], str] | None = None) -> tuple[Healer, list[str], list[str]]:
    warned: list[str] = []
    told: list[str] = []
    h = kind({"out-of-band": mode}, PlanQueue(tmp_path), max_per_hour=5, apply=apply,
             say=warned.append, inform=told.append)
    return h, warned, told


def _events(*brokers: str) -> Any:
    return Tracker().update([Condition("out-of-band", b, "warning", "x") for b in brokers], 0)


def _hot() -> tuple[Any, Any]:
    state = snapshot_files([EXAMPLES / "hot-broker.json"]).read().states[-1]
    return state, run([state], Options())[-1]


def test_nothing_queued_is_information(tmp_path: Path) -> None:
    """"no plan moves anything; nothing queued" was `lbctl: warning:`: nothing needs anyone."""
    state, result = _hot()
    h, warned, told = _healer(_Quiet, tmp_path, "approve")
    assert h.on_events(_events("broker-1"), state, result.settings, None) == []
    assert warned == [] and any("nothing queued" in x for x in told), (warned, told)


@pytest.mark.parametrize("outcome, warning", [("applied (done 2)", False),
                                              ("partial (done 1, failed 1)", True),
                                              ("failed: the lock is held", True)])
def test_a_plan_applied_whole_is_information_a_plan_that_failed_a_warning(
        tmp_path: Path, outcome: str, warning: bool) -> None:
    state, result = _hot()
    h, warned, told = _healer(Healer, tmp_path, "apply", apply=lambda _m: outcome)
    made = h.on_events(_events("broker-1"), state, result.settings, result.plan())
    assert len(made) == 1
    line = f"healing out-of-band:broker-1: plan {made[0].id} {outcome}"
    assert (line in warned) is warning and (line in told) is not warning, (warned, told)


def test_a_plan_shared_by_two_anomalies_is_information(tmp_path: Path) -> None:
    state, result = _hot()
    h, warned, told = _healer(Healer, tmp_path, "approve")
    h.on_events(_events("broker-1", "broker-2"), state, result.settings, result.plan())
    assert warned == [], warned
    assert any("is the plan for this capture too" in x for x in told), told


# --- the notes under a table wrap to the width ------------------------------------------------


def _table_rows() -> list[dict[str, Any]]:
    return [{"bundle": f"acme-payments/settlement-events/0x{i:08x}_0x{i + 1:08x}",
             "action": "unload", "reason": "Overloaded", "destinationBroker": f"broker-{i}",
             "throughputInMegabytes": 1.5 * i, "messagesPerSecondIn": 100.0 * i,
             "estimatedLoadAfter": 0.5} for i in range(3)]


_OPTIONAL = ("action", "reason", "throughputInMegabytes", "messagesPerSecondIn",
             "estimatedLoadAfter", "destinationBroker")


@pytest.mark.parametrize("limit", [60, 70, 80, 90])
def test_the_notes_under_a_table_fit_the_width_with_every_name_whole(limit: int) -> None:
    """"(left out to fit 60 columns: …; --wide shows them)" ran past the 60 columns it named."""
    from lbctl.render.tables import render_table

    text = render_table(_table_rows(), limit=limit, optional=_OPTIONAL)
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("("))
    notes = lines[start:]
    assert all(len(x) <= limit for x in lines), text
    said = " ".join(x.strip() for x in notes)
    assert "(every row: action unload, reason Overloaded, " in said, text
    left = said.split("(left out to fit ", 1)[1]
    for name in left.split(": ", 1)[1].split(";")[0].split(", "):
        assert name in _OPTIONAL and any(name in x for x in notes), (name, text)
    assert "(left out" in text and "--wide shows them)" in said


def test_a_note_that_fits_is_as_it_was() -> None:
    from lbctl.render.tables import render_table

    text = render_table(_table_rows(), limit=100, optional=_OPTIONAL)
    assert text.splitlines()[-2:] == [
        "(every row: action unload, reason Overloaded, estimatedLoadAfter 0.50)",
        "(left out to fit 100 columns: throughputInMegabytes; --wide shows them)"], text
    assert "(" not in render_table(_table_rows(), limit=None, optional=_OPTIONAL)



# --- apply's plan line and per-action rows fit the terminal ------------------------------------


@pytest.fixture(scope="module")
def _sandbox():  # type: ignore[no-untyped-def]
    from lbctl.sandbox import hot_cluster

    c = hot_cluster(3)
    yield c
    c.stop()


@pytest.mark.live
@pytest.mark.parametrize("columns", [60, 80])
def test_apply_plan_line_and_rows_fit_with_every_name_whole(
        _sandbox: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    """"plan …: 1 action(s), computed … ago; against cluster … now: …" and "#1 valid unload …
    from … to …" ran past 80 columns; each breaks at spaces now, a row under its description."""
    import json

    from typer.testing import CliRunner

    from lbctl.cli.app import app

    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))
    monkeypatch.setenv("LBCTL_CONTEXTS", str(tmp_path / "contexts.json"))
    url = _sandbox.admin_url
    r = CliRunner().invoke(app, ["--admin-url", url, "recommend", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    plan = tmp_path / "a-plan-file-named-at-some-length.json"
    plan.write_text(r.stdout, encoding="utf-8")
    env = {"COLUMNS": str(columns)}
    r = CliRunner().invoke(app, ["--admin-url", url, "apply", str(plan), "--dry-run"], env=env)
    assert r.exit_code == 0, r.stderr
    j = CliRunner().invoke(app, ["--admin-url", url, "apply", str(plan), "--dry-run", "-o",
                                 "json"], env=env)
    actions = json.loads(j.stdout)["actions"]
    lines = r.stdout.splitlines()
    block = lines[:next(i for i, x in enumerate(lines) if x.startswith("lbctl would send"))]
    for x in block:  # longer than the width only when it is one word (the plan's long path)
        assert len(x) <= columns or len(x.split()) == 1, r.stdout
    said = " ".join(" ".join(block).split())
    assert f"plan {plan}: {len(actions)} action(s), computed " in said, said
    assert "skipped by the plan" in said
    for a in actions:  # each row, put back together, is the action whole
        assert (f"#{a['step']} valid {a['action']} {a['bundle']} from {a['broker']} to "
                f"{a['destinationBroker']}") in said, said
    rows = [i for i, x in enumerate(block) if x.startswith("  #")]
    assert rows and all(block[i + 1].startswith(" " * 21) for i in rows
                        if i + 1 < len(block) and not block[i + 1].startswith("  #")), block


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_fit_line_breaks_only_at_spaces(width: int) -> None:
    from lbctl.apply.runner import fit_line

    line = ("  #12  valid         unload acme-payments/settlement-events/0x7ffffffe_0xaaaaaaa8 "
            "from pulsar-broker-0.pulsar-broker.pulsar.svc.cluster.local:8080 to "
            "pulsar-broker-2.pulsar-broker.pulsar.svc.cluster.local:8080: moved since")
    out = fit_line(line, width, hang=21)
    assert " ".join(" ".join(out).split()) == " ".join(line.split())
    assert out[0].startswith("  #12  valid         unload")
    for x in out:
        assert len(x) <= width or len(x.split()) == 1, out
    assert all(x.startswith(" " * min(21, width // 2)) for x in out[1:])
    assert fit_line(line, None) == [line]  # a log keeps one record a line
