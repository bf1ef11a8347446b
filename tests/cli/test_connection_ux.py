"""Issue 28 item 10: ``-o`` before the subcommand, ``$PULSAR_HOME/conf/client.conf`` found as
pulsar-admin finds it, named contexts (pulsarctl's), and completion of names."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from lbctl.admin.clientconf import ConnectionOptions, resolve_connection
from lbctl.cli.app import app
from lbctl.cli.connection import sink_output_option
from lbctl.sandbox import TestCluster, hot_cluster
from tests.paths import EXAMPLES

HOT = str(EXAMPLES / "hot-broker.json")


def _run(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env=env)


# --- -o before the subcommand -----------------------------------------------------------------------
def test_output_flag_before_the_subcommand() -> None:
    after = _run("recommend", HOT, "-o", "json")
    assert after.exit_code == 0
    for args in (["-o", "json", "recommend", HOT], ["--output=json", "recommend", HOT],
                 ["-ojson", "recommend", HOT],
                 ["--request-timeout", "5", "-o", "json", "recommend", HOT]):
        r = _run(*args)
        assert r.exit_code == 0, (args, r.stderr)
        assert r.stdout == after.stdout, args
    r = _run("-o", "csv", "snapshot", "validate", HOT)  # a nested subcommand
    assert r.exit_code == 0 or "-o" not in r.stderr, r.stderr


def test_sinking_keeps_the_double_dash_and_global_values() -> None:
    flags = {"--admin-url": True, "--debug": False}
    assert sink_output_option(["--admin-url", "-o", "-o", "json", "recommend", "--", "x"],
                              flags) == ["--admin-url", "-o", "recommend", "-o", "json", "--", "x"]
    assert sink_output_option(["recommend", "-o", "json"], flags) == ["recommend", "-o", "json"]


# --- $PULSAR_HOME/conf/client.conf ----------------------------------------------------------------
def _home(tmp_path: Path, url: str) -> Path:
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "client.conf").write_text(f"webServiceUrl={url}\n")
    return tmp_path


def test_pulsar_home_client_conf_is_the_default(tmp_path: Path) -> None:
    home = _home(tmp_path, "http://home.example:8080")
    other = tmp_path / "other.conf"
    other.write_text("webServiceUrl=http://env.example:8080\n")
    env = {"PULSAR_HOME": str(home)}
    cfg = resolve_connection(ConnectionOptions(), env)
    assert cfg.admin_url == "http://home.example:8080"
    assert cfg.client_conf == str(home / "conf" / "client.conf")
    # pulsar-admin's order: $PULSAR_CLIENT_CONF first, then $PULSAR_HOME/conf/client.conf
    assert resolve_connection(ConnectionOptions(), {**env, "PULSAR_CLIENT_CONF": str(other)}
                              ).admin_url == "http://env.example:8080"
    assert resolve_connection(ConnectionOptions(admin_url="http://flag:1"), env
                              ).admin_url == "http://flag:1"
    # PULSAR_HOME without a conf/client.conf: the defaults, quietly
    assert resolve_connection(ConnectionOptions(), {"PULSAR_HOME": str(tmp_path / "none")}
                              ).admin_url == "http://localhost:8080"


# --- named contexts ---------------------------------------------------------------------------------
@pytest.fixture
def contexts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "cfg" / "lbctl" / "contexts.json"
    monkeypatch.setenv("LBCTL_CONTEXTS", str(path))
    return path


@pytest.fixture
def cluster() -> Iterator[TestCluster]:
    c = hot_cluster(2, bundles_per_broker=1)
    yield c
    c.stop()


@pytest.mark.live
def test_context_add_use_list_delete(contexts: Path, cluster: TestCluster) -> None:
    secret = "eyJhbGciOiJub25lIn0.c2VjcmV0LXRva2Vu.sig"
    r = _run("context", "add", "prod", "--admin-url", cluster.admin_url, "--token", secret)
    assert r.exit_code == 0 and "created" in r.stdout, r.stderr
    assert _run("context", "add", "dead", "--admin-url", "http://127.0.0.1:1").exit_code == 0
    mode = os.stat(contexts).st_mode
    assert stat.S_IMODE(mode) == 0o600 and stat.S_IMODE(os.stat(contexts.parent).st_mode) == 0o700
    listing = _run("context", "list")
    assert "* dead" in " ".join(listing.stdout.split()) and "token (set)" in listing.stdout
    data = json.loads(_run("context", "list", "-o", "json").stdout)
    assert data["current"] == "dead" and data["contexts"]["prod"]["token"] == "(set)"
    # the current context is used; --context picks another; a flag wins over both
    assert _run("brokers").exit_code == 3  # dead: connection refused
    assert _run("--context", "prod", "brokers").exit_code == 0
    assert _run("brokers", "--context", "prod").exit_code == 0  # after the subcommand too
    assert _run("brokers", env={"LBCTL_CONTEXT": "prod"}).exit_code == 0
    assert _run("--admin-url", cluster.admin_url, "brokers").exit_code == 0
    assert _run("context", "use", "prod").exit_code == 0
    ok = _run("brokers", "--debug")
    assert ok.exit_code == 0 and secret not in ok.stdout + ok.stderr
    for r in (listing, _run("context", "list", "-o", "yaml")):
        assert secret not in r.stdout + r.stderr
    bad = _run("context", "use", "prd")
    assert bad.exit_code == 2 and "did you mean prod?" in bad.stderr
    assert _run("--context", "nope", "brokers").exit_code == 2
    assert _run("context", "delete", "prod").exit_code == 0
    assert "prod" not in json.loads(_run("context", "list", "-o", "json").stdout)["contexts"]


def test_context_add_needs_flags_and_refuses_a_stdin_token(contexts: Path) -> None:
    r = _run("context", "add", "x")
    assert r.exit_code == 2 and "--admin-url" in r.stderr
    r = _run("context", "add", "x", "--token", "-", "--admin-url", "http://h:1")
    assert r.exit_code == 2 and "--token-file" in r.stderr
    assert not contexts.exists()


@pytest.mark.parametrize(("name", "url", "says"), [
    ("x", "ftp://x", "must start with http"),
    ("x", "http://[::1", "bad admin URL"),
    ("x\x1b[2J", "http://h:1", "bad context name 'x\\x1b[2J'"),
    ("x\u202e", "http://h:1", "bad context name"),
])
def test_context_add_refuses_a_bad_url_or_name_when_it_is_given(contexts: Path, name: str,
                                                                  url: str, says: str) -> None:
    """Both used to be stored (exit 0) and refused only on every later use of the context."""
    r = _run("context", "add", name, "--admin-url", url)
    assert r.exit_code == 2 and says in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert not contexts.exists()


# --- completion -------------------------------------------------------------------------------------
def _complete(line: str) -> list[str]:
    words = line.split(" ")
    r = CliRunner().invoke(app, [], prog_name="lbctl", env={
        "_LBCTL_COMPLETE": "complete_bash", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)})
    return r.output.split()


def test_completion_offers_names() -> None:
    assert _complete("lbctl recommend --strategy Th") == ["ThresholdShedder"]
    assert "LeastResourceUsageWithWeight" in _complete("lbctl recommend --placement Le")
    assert "TransferShedder" in _complete("lbctl simulate --strategy ")
    assert _complete("lbctl compare --strategy AvgShedder:Av") == ["AvgShedder:AvgShedder"]
    assert "lbctl" in _complete("lbctl compare --strategy l")
    brokers = _complete(f"lbctl explain {HOT} --broker broker-")
    assert brokers and all(b.startswith("broker-") and b.endswith(":8080") for b in brokers)
    snap = str(EXAMPLES / "rolling-restart.yaml")
    assert "broker-6.pulsar.svc:8080" in _complete(f"lbctl rebalance-after --snapshot {snap} b")
    assert "broker-6.pulsar.svc:8080" in _complete(f"lbctl drain --snapshot {snap} ")
    assert "acme/orders" in _complete(f"lbctl split-bundle --snapshot {HOT} acme/")
    assert all(b.startswith("acme/orders/0x") for b in _complete(f"lbctl explain {HOT} -b acme/o"))
    assert _complete("lbctl drain --snapshot /nonexistent.json ") == []  # no file: nothing
