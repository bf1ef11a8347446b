"""Helpers of the live tests: tokens, a runner of the real `lbctl` app against a test cluster, and
the check that no secret leaked."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import TestCluster

ADMIN_TOKEN = "eyJhbGciOiJIUzI1NiJ9.c3VwZXJ1c2Vy.SECRET-ADMIN-SIGNATURE"
USER_TOKEN = "eyJhbGciOiJIUzI1NiJ9.dXNlcg.SECRET-USER-SIGNATURE"
TOKENS = {ADMIN_TOKEN: "admin", USER_TOKEN: "user"}
SECRETS = (ADMIN_TOKEN, USER_TOKEN, "SECRET-ADMIN-SIGNATURE", "SECRET-USER-SIGNATURE",
           "BROKER-CLIENT-SECRET", "U0VDUkVULUtFWQ==")


class Lbctl:
    """`lbctl` with the cluster's URL and the admin token, run in-process."""

    def __init__(self, cluster: TestCluster, token: str | None = ADMIN_TOKEN):
        self.cluster = cluster
        self.token = token
        self.runner = CliRunner()

    def args(self, *extra: str, token: str | None = ...) -> list[str]:  # type: ignore[assignment]
        tok = self.token if token is ... else token
        base = ["--admin-url", self.cluster.admin_url, "--request-timeout", "2"]
        if tok:
            base += ["--auth-plugin", "org.apache.pulsar.client.impl.auth.AuthenticationToken",
                     "--auth-params", f"token:{tok}"]
        return base + list(extra)

    def __call__(self, *extra: str, token: Any = ..., input: str | None = None) -> Any:
        return self.runner.invoke(app, self.args(*extra, token=token), input=input)



def assert_no_secret(*texts: str) -> None:
    for text in texts:
        for s in SECRETS:
            assert s not in text, f"secret {s[:12]}… leaked"
