"""The host older Pulsar releases match isolation policies against, checked against the JDK.

Before ``parseBrokerHost`` (Pulsar PR #21894, 3.2.0), ``LoadManagerShared.applyNamespacePolicies``
took a broker's host with ``new URL("http://" + brokerId).getHost()`` and skipped a broker whose id
the constructor refused. ``java/UrlHost.java`` (plain JDK, no Pulsar) prints that host for each id;
:func:`lbctl.model.policies.url_host` must agree on every one.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from lbctl.model.policies import url_host

JAVA = Path(__file__).parent / "java" / "UrlHost.java"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")),
                       reason="no JDK on the PATH (javac/java)"),
]

FIXED = [
    "b1:8080", "b1", "b1:", "[::1]:8080", "[::1]", "[::1]x:80", "[::1:80", "B1:8080",
    "user@b1:8080", "@b1:80", "u@:80", ":80", "b1:8080/x", "b1:8080?x", "b1#x:8080",
    "a:b:8080", "::1:8080", "b1:abc", "b1:+80", "b1:-1", "b1:+", "b1:1a", "b1:99999",
    "b1:2147483647", "b1:2147483648", "b1:-2147483648", "b 1:8080", "b1:٣",
    "[fe80::1%eth0]:8080", "[::ffff:10.0.0.1]:80", "[zz]:80", "[::1]:-2", "b1:-1 ",
    "10.0.0.1:8080", "pulsar-broker-0.pulsar-broker.pulsar.svc.cluster.local:8080",
]


def _random_ids(n: int) -> list[str]:
    rng = random.Random(24)
    alphabet = "ab1:[]@/?#+-.0 %"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 10))) for _ in range(n)]


def test_url_host_matches_the_jdk(tmp_path: Path) -> None:
    subprocess.run(["javac", "-d", str(tmp_path), str(JAVA)], check=True, capture_output=True)
    ids = FIXED + _random_ids(400)
    res = subprocess.run(["java", "-cp", str(tmp_path), "UrlHost"], input="\n".join(ids) + "\n",
                         capture_output=True, text=True, check=True, encoding="utf-8")
    got = res.stdout.splitlines()
    assert len(got) == len(ids)
    wrong = [(i, j, url_host(i)) for i, j in zip(ids, got, strict=True)
             if (None if j == "!" else j[1:]) != url_host(i)]
    assert not wrong
