"""explain's short profile names ``namespacePoliciesUnloadCheck`` (shouldNamespacePoliciesUnload
in doLoadShedding from 2.11.0) only where it bore on the cycle: a modular cycle that unloads with
an isolation policy present. On a 2.10 profile without policies it is one of the "other ways"
counted, not a paragraph the operator must read past."""

from __future__ import annotations

from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.paths import EXAMPLES


def _explain(*args: str) -> str:
    r = CliRunner().invoke(app, ["explain", *args], env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    return r.stdout


def test_not_named_without_an_isolation_policy() -> None:
    text = _explain(str(EXAMPLES / "hot-broker.json"), "--pulsar-version", "2.10.6")
    assert "namespacePoliciesUnloadCheck" not in text
    assert "other way(s) Pulsar 2.10.6 differs" in text


def test_listed_with_profile() -> None:
    text = _explain(str(EXAMPLES / "hot-broker.json"), "--pulsar-version", "2.10.6",
                    "--profile")
    assert "namespacePoliciesUnloadCheck" in text
