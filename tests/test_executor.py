"""The executor: show first, dry run sends nothing, confirmation, journal, no retry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lbctl.admin.client import AdminClient
from lbctl.admin.errors import ServerError
from lbctl.errors import MutationRefused, UsageError
from lbctl.executor import Executor, parse_range, split_mutation, unload_mutation
from tests.http_mock import mock

# httpx through pytest: ruff bans module-level httpx imports (they would slow the CLI's start-up)
httpx = pytest.importorskip("httpx")

A = "http://admin:8080"
PATH = "/admin/v2/namespaces/public/default/0x00000000_0x40000000/unload"


_CLIENTS: list[AdminClient] = []


@pytest.fixture(autouse=True)
def _close_clients():
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def _client() -> AdminClient:
    _CLIENTS.append(AdminClient(A, backoff=0))
    return _CLIENTS[-1]


def _ex(tmp_path: Path, shown: list[str], **kw) -> Executor:
    return Executor(_client(), show=shown.append, journal=tmp_path / "j.jsonl",
                    clock=lambda: 1700000000.0, **kw)


@mock
def test_dry_run_shows_and_sends_nothing(tmp_path: Path) -> None:
    route = mock.put(A + PATH).mock(return_value=httpx.Response(204))
    shown: list[str] = []
    out = _ex(tmp_path, shown, dry_run=True).run(
        [unload_mutation("public/default", "0x00000000_0x40000000", "b2:8080")])
    assert not route.called and out[0].state == "dry-run"
    assert shown[1].strip().startswith(f"PUT {A}{PATH}?destinationBroker=b2%3A8080")
    assert shown[-1] == "dry run: nothing was sent"
    assert not (tmp_path / "j.jsonl").exists()


@mock
def test_refuses_without_terminal_or_yes(tmp_path: Path) -> None:
    route = mock.put(A + PATH).mock(return_value=httpx.Response(204))
    m = unload_mutation("public/default", "0x00000000_0x40000000")
    with pytest.raises(MutationRefused, match="pass --yes") as e:
        _ex(tmp_path, []).run([m])
    assert e.value.exit_code == 12
    with pytest.raises(MutationRefused, match="aborted"):
        _ex(tmp_path, [], interactive=True, confirm=lambda q: False).run([m])
    asked: list[str] = []
    _ex(tmp_path, [], interactive=True, confirm=lambda q: asked.append(q) or True).run([m])
    assert asked == [f"Send 1 request(s) to {A}?"] and route.call_count == 1


@mock
def test_journal_and_no_retry(tmp_path: Path) -> None:
    ok = mock.put(A + PATH).mock(return_value=httpx.Response(204))
    bad = mock.put(A + "/admin/v2/namespaces/public/default/0x40000000_0x80000000/unload").mock(
        return_value=httpx.Response(503, json={"reason": "busy"}))
    ms = [unload_mutation("public/default", "0x00000000_0x40000000"),
          unload_mutation("public/default", "0x40000000_0x80000000"),
          unload_mutation("public/default", "0x80000000_0xc0000000")]
    with pytest.raises(ServerError, match="busy; 1 earlier request"):
        _ex(tmp_path, [], yes=True).run(ms)
    assert ok.call_count == 1 and bad.call_count == 1  # stopped at the failure, not retried
    lines = [json.loads(x) for x in (tmp_path / "j.jsonl").read_text().splitlines()]
    assert [x["state"] for x in lines] == ["sending", "done", "sending", "failed"]
    assert lines[3]["status"] == 503 and lines[0]["time"] == "2023-11-14T22:13:20.000Z"
    assert lines[0]["url"] == A + PATH and lines[0]["method"] == "PUT"


def test_unwritable_journal_sends_nothing(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    ex = Executor(_client(), yes=True, show=lambda _: None, journal=tmp_path / "f" / "j.jsonl")
    with pytest.raises(Exception, match="cannot write the journal"):
        ex.run([unload_mutation("t/n")])


def test_split_mutation_rules() -> None:
    m = split_mutation("public/default", "0x00000000_0x40000000", unload=True,
                       algorithm="specified_positions_divide", boundaries=[0x10000000])
    assert m.call.body == [0x10000000]
    assert dict(m.call.query) == {"unload": "true", "splitAlgorithmName": "specified_positions_divide"}
    assert "at 0x10000000" in m.summary
    with pytest.raises(UsageError, match="needs split boundaries"):
        split_mutation("t/n", "0x00000000_0x40000000", algorithm="specified_positions_divide")
    with pytest.raises(UsageError, match="specified_positions_divide"):
        split_mutation("t/n", "0x00000000_0x40000000", boundaries=[5])
    plain = split_mutation("t/n", "0x00000000_0x40000000")
    assert plain.call.body is None and dict(plain.call.query) == {"unload": "false"}


def test_parse_range() -> None:
    assert parse_range("t/n", "0x00000000_0x40000000") == "0x00000000_0x40000000"
    assert parse_range("t/n", "t/n/0x00000000_0x40000000") == "0x00000000_0x40000000"
    assert parse_range("t/n", "largest") == "LARGEST"
    with pytest.raises(UsageError):
        parse_range("t/n", "0x0_0x4")
    with pytest.raises(UsageError, match="not of namespace"):
        parse_range("t/n", "t/other/0x00000000_0x40000000")
