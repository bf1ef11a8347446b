"""A command given no snapshot reads the live cluster; when nothing answers there, its one error
line says what to do next (a newcomer's first `lbctl recommend`, with no sandbox running)."""

from __future__ import annotations

import pytest

from lbctl.cli.app import app


@pytest.mark.parametrize("cmd", [["recommend"], ["explain"], ["propose"]])
def test_the_refused_read_says_what_to_give(runner, monkeypatch, cmd: list[str]) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    res = runner.invoke(app, ["--admin-url", "http://127.0.0.1:9", "--request-timeout", "1",
                              *cmd])
    assert res.exit_code == 3
    [line] = res.stderr.strip().splitlines()
    assert line.startswith("lbctl: error: GET http://127.0.0.1:9/admin/v2/")
    assert "cannot connect" in line and "give a snapshot file" in line and "sandbox" in line


def test_a_snapshot_given_gets_no_hint(runner, tmp_path) -> None:
    res = runner.invoke(app, ["recommend", str(tmp_path / "none.json")])
    assert res.exit_code != 0 and "sandbox" not in res.stderr
