"""Issue 12, the executor: a private crash-safe journal, "applied, but not journaled", Ctrl-C in
flight, and a repeated request within the grace period."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from lbctl.admin.client import AdminClient
from lbctl.errors import ConfigError, Interrupted, MutationRefused, NotJournaled
from lbctl.executor import Executor, unload_mutation
from tests.http_mock import mock

httpx = pytest.importorskip("httpx")

A = "http://admin:8080"
PATH = "/admin/v2/namespaces/public/default/0x00000000_0x40000000/unload"
NOW = 1700000000.0


@pytest.fixture
def client():
    c = AdminClient(A, backoff=0)
    yield c
    c.close()


def _ex(client: AdminClient, journal: Path, now: float = NOW, **kw) -> Executor:
    return Executor(client, yes=True, show=lambda _: None, journal=journal, clock=lambda: now, **kw)


def _m():
    return unload_mutation("public/default", "0x00000000_0x40000000")


@mock
def test_the_journal_is_private(client: AdminClient, tmp_path: Path) -> None:
    mock.put(A + PATH).mock(return_value=httpx.Response(204))
    journal = tmp_path / "state" / "lbctl" / "journal.jsonl"
    _ex(client, journal).run([_m()])
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    assert stat.S_IMODE(journal.parent.stat().st_mode) == 0o700
    lines = [json.loads(x) for x in journal.read_text().splitlines()]
    assert [x["state"] for x in lines] == ["sending", "done"]


@mock
def test_a_partial_journal_line_is_repaired_not_glued(client: AdminClient, tmp_path: Path) -> None:
    mock.put(A + PATH).mock(return_value=httpx.Response(204))
    journal = tmp_path / "j.jsonl"
    journal.write_text('{"state": "sending", "ti')  # a crash in the middle of a line
    _ex(client, journal).run([_m()])
    assert [json.loads(x)["state"] for x in journal.read_text().splitlines()] == ["sending", "done"]


@mock
def test_applied_but_not_journaled(client: AdminClient, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    route = mock.put(A + PATH).mock(return_value=httpx.Response(204))
    ex = _ex(client, tmp_path / "j.jsonl")
    real = ex._append
    calls = {"n": 0}

    def failing(record: bytes) -> None:
        calls["n"] += 1
        if calls["n"] == 3:  # the check, "sending", then the outcome: the disk is full
            raise ConfigError("j.jsonl: cannot write: No space left on device; nothing was appended")
        real(record)

    monkeypatch.setattr(ex, "_append", failing)
    with pytest.raises(NotJournaled, match="applied, but not journaled.*No space left"):
        ex.run([_m()])
    assert route.called
    assert NotJournaled.exit_code != 0


@mock
def test_ctrl_c_while_a_mutation_is_in_flight(client: AdminClient, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(call):
        raise KeyboardInterrupt

    monkeypatch.setattr(client, "request", interrupted)
    journal = tmp_path / "j.jsonl"
    with pytest.raises(Interrupted, match="may have been applied") as e:
        _ex(client, journal).run([_m()])
    assert e.value.exit_code == 130
    assert json.loads(journal.read_text().splitlines()[-1])["state"] == "interrupted"


@mock
def test_a_repeat_within_the_grace_period_is_refused_unless_forced(client: AdminClient,
                                                                   tmp_path: Path) -> None:
    route = mock.put(A + PATH).mock(return_value=httpx.Response(204))
    journal = tmp_path / "j.jsonl"
    _ex(client, journal).run([_m()])
    with pytest.raises(MutationRefused, match=r"sent 10 min ago.*grace period.*--force"):
        _ex(client, journal, now=NOW + 600).run([_m()])
    assert route.call_count == 1
    warned: list[str] = []
    _ex(client, journal, now=NOW + 600, force=True, warn=warned.append).run([_m()])
    assert route.call_count == 2 and "sending again" in warned[0]
    _ex(client, journal, now=NOW + 600 + 31 * 60).run([_m()])  # the grace period is over
    assert route.call_count == 3


@mock
def test_a_dry_run_only_warns_about_a_repeat(client: AdminClient, tmp_path: Path) -> None:
    mock.put(A + PATH).mock(return_value=httpx.Response(204))
    journal = tmp_path / "j.jsonl"
    _ex(client, journal).run([_m()])
    warned: list[str] = []
    out = _ex(client, journal, now=NOW + 60, dry_run=True, warn=warned.append).run([_m()])
    assert out[0].state == "dry-run" and "1 min ago" in warned[0]
