"""`lbctl doctor` on the loopback test cluster, modular and extensible: the live read (runtime and
dynamic configuration, every broker's version and load manager) over real HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from lbctl.sandbox import TestCluster, extensible_cluster
from tests.live.live_helpers import TOKENS, Lbctl, assert_no_secret

pytestmark = pytest.mark.live

LLMR = "org.apache.pulsar.broker.loadbalance.impl.LeastLongTermMessageRate"
LRUWW = "org.apache.pulsar.broker.loadbalance.impl.LeastResourceUsageWithWeight"


@pytest.fixture
def ext() -> Iterator[TestCluster]:
    c = extensible_cluster(tokens=TOKENS)
    yield c
    c.stop()


def findings(res) -> dict[str, dict]:
    data = json.loads(res.stdout)
    return {f["rule"]: f for f in data["findings"]}


def test_modular_defaults(cluster: TestCluster, lbctl: Lbctl) -> None:
    """The sandbox runs ThresholdShedder with the default placement (LeastLongTermMessageRate)."""
    res = lbctl("doctor", "-o", "json")
    assert res.exit_code == 1, res.output
    got = findings(res)
    assert set(got) == {"shedder-placement-mismatch", "threshold-no-lower-boundary"}
    assert "(runtime configuration)" in got["shedder-placement-mismatch"]["found"]
    assert_no_secret(res.stdout, res.stderr)
    # the live read asked for the dynamic configuration and each broker's version
    paths = {r.path for r in cluster.log}
    assert "/admin/v2/brokers/configuration/values" in paths
    assert "/admin/v2/brokers/version" in paths


def test_one_request_for_the_dynamic_configuration(cluster: TestCluster, lbctl: Lbctl) -> None:
    """doctor takes the dynamic configuration the live read asked for (beside the runtime
    configuration) instead of asking again: one request a run, and its findings still say a
    stored value's origin."""
    cluster.set_dynamic(loadBalancerSheddingEnabled="false")
    res = lbctl("doctor", "-o", "json")
    paths = [r.path for r in cluster.log]
    assert paths.count("/admin/v2/brokers/configuration/values") == 1
    found = findings(res)["balancing-disabled"]
    assert "(dynamic configuration)" in found["found"]
    assert "delete-dynamic-config --config loadBalancerSheddingEnabled" in found["fix"]


def test_a_refused_dynamic_configuration_is_still_said(cluster: TestCluster, lbctl: Lbctl) -> None:
    from lbctl.sandbox import Fault

    cluster.faults.append(Fault(r"/configuration/values", status=403, reason="Forbidden"))
    res = lbctl("doctor", "-o", "json")
    notes = " ".join(json.loads(res.stdout)["notes"])
    assert "could not read dynamic configuration" in notes and "403" in notes
    assert [r.path for r in cluster.log].count("/admin/v2/brokers/configuration/values") == 1


def test_modular_fixed_then_drained(cluster: TestCluster, lbctl: Lbctl) -> None:
    # (broker.conf: the placement strategy is not dynamic, and a stored one is never applied —
    # the stored-not-dynamic finding)
    cluster.config["loadBalancerLoadPlacementStrategy"] = LRUWW
    cluster.config["lowerBoundarySheddingEnabled"] = "true"
    res = lbctl("doctor", "-o", "json")
    assert res.exit_code == 0 and findings(res) == {}
    cluster.set_dynamic(loadBalancerSheddingEnabled="false")  # left behind by a drain
    res = lbctl("doctor")
    assert res.exit_code == 1
    text = " ".join(res.stdout.split())
    assert "balancing-disabled" in text and "(dynamic configuration)" in text
    assert "delete-dynamic-config --config loadBalancerSheddingEnabled" in text


def test_modular_mixed_versions(cluster: TestCluster, lbctl: Lbctl) -> None:
    """A broker answering /brokers/version with another release: a rolling upgrade half done."""
    first = next(iter(cluster.brokers))
    cluster.brokers[first].version = "3.3.1"
    res = lbctl("doctor", "-o", "json", "--rule", "mixed-cluster")
    got = findings(res)
    assert got["mixed-cluster"]["severity"] == "warning"
    assert "3.3.1" in got["mixed-cluster"]["found"]


def test_extensible(ext: TestCluster) -> None:
    lb = Lbctl(ext)
    res = lb("doctor", "-o", "json")
    data = json.loads(res.stdout)
    assert data["loadManager"] == "extensible"
    assert res.exit_code == data["status"]
    assert set(findings(res)) <= {"memory-weights"}
    ext.set_dynamic(loadBalancerLoadPlacementStrategy=LLMR, maxUnloadPercentage="0.5")
    res = lb("doctor", "-o", "json")
    got = findings(res)
    assert "load-manager-mismatch" in got
    assert "maxUnloadPercentage=0.5" in got["load-manager-mismatch"]["found"]


def test_unreachable_cluster_is_one_error_line() -> None:
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    res = CliRunner().invoke(app, ["--admin-url", "http://127.0.0.1:1", "--request-timeout", "1",
                                   "doctor"])
    assert res.exit_code == 3 and res.stdout == ""
    assert res.stderr.startswith("lbctl: error:")
