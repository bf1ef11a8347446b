"""The root's connection flags are stored as given and made into the admin client's options only
when a command asks (:func:`lbctl.cli.connection.given_options`): a file-reading command imports
nothing of :mod:`lbctl.admin`, and a live one still honours every flag and client.conf key."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.admin.auth import PLUGIN_NAMES
from lbctl.cli import connection
from lbctl.cli.app import app
from tests.started import modules_after_a_file_recommend


def _run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env=env)


def test_the_auth_plugin_help_names_the_plugins_the_client_takes() -> None:
    assert connection.PLUGIN_NAMES == PLUGIN_NAMES
    r = _run("--help")
    assert r.exit_code == 0 and "AuthenticationOAuth2" in r.stdout


def test_a_client_conf_is_honoured_before_or_after_the_subcommand(tmp_path: Path) -> None:
    conf = tmp_path / "client.conf"
    conf.write_text("webServiceUrl=http://127.0.0.1:9/\n")  # discard port: refused
    for args in (("--client-conf", str(conf), "brokers"), ("brokers", "--client-conf", str(conf))):
        r = _run(*args, env={"LBCTL_CONTEXTS": str(tmp_path / "none.json")})
        assert r.exit_code == 3 and "http://127.0.0.1:9/admin/v2/" in r.stderr, r.stderr


def test_the_flags_given_reach_the_command(tmp_path: Path) -> None:
    store = tmp_path / "contexts.json"
    env = {"LBCTL_CONTEXTS": str(store)}
    r = _run("--admin-url", "http://h:1", "--broker-host-allow", "a*", "context", "add", "x",
             "--broker-host-allow", "b", "--client-conf", "c.conf", "--request-timeout", "5",
             env=env)
    assert r.exit_code == 0, r.stderr
    kept = json.loads(_run("context", "list", "-o", "json", env=env).stdout)["contexts"]["x"]
    assert kept["admin_url"] == "http://h:1" and kept["broker_host_allow"] == "a*,b"
    assert kept["request_timeout"] == 5 and kept["client_conf"] == os.path.abspath("c.conf")


def test_outside_a_command_nothing_was_given() -> None:
    assert connection.given_options(None).admin_url is None


@pytest.mark.slow
def test_a_file_recommend_imports_no_admin_client_and_one_shedder() -> None:
    loaded = modules_after_a_file_recommend()
    assert "lbctl.strategies.shedding.threshold" in loaded  # the example's shedder
    assert not {m for m in loaded if m.startswith("lbctl.admin")}
    others = {f"lbctl.strategies.shedding.{m}" for m in ("avg", "overload", "uniform")}
    assert not loaded & others
