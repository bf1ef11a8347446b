"""A live read captures the settings stored with ``update-dynamic-config``
(``GET /admin/v2/brokers/configuration/values``) as ``dynamicConfig``, and a ``--broker-conf``
file does not override them: ``BrokerService.updateDynamicServiceConfiguration`` applies the
stored values over the file's, so the cluster runs the dynamic one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lbctl.sandbox import TestCluster
from tests.live.live_helpers import Lbctl

pytestmark = pytest.mark.live

KEY = "loadBalancerBrokerThresholdShedderPercentage"


def test_a_dynamic_value_beats_broker_conf_live(cluster: TestCluster, lbctl: Lbctl,
                                                tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text(f"{KEY}=40\n")
    cluster.set_dynamic(**{KEY: "25"})
    res = lbctl("explain", "--broker-conf", str(conf))
    assert res.exit_code == 0, res.output
    assert f"{KEY} = 25 (dynamic config)" in res.stdout
    out = tmp_path / "snap.json"
    res = lbctl("snapshot", "export", "-f", str(out))
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["dynamicConfig"] == {KEY: "25"}


def test_without_a_stored_value_broker_conf_still_wins(cluster: TestCluster, lbctl: Lbctl,
                                                       tmp_path: Path) -> None:
    conf = tmp_path / "broker.conf"
    conf.write_text(f"{KEY}=40\n")
    res = lbctl("explain", "--broker-conf", str(conf))
    assert res.exit_code == 0, res.output
    assert f"{KEY} = 40 (broker.conf)" in res.stdout


def test_an_extensible_read_captures_it_too(tmp_path: Path) -> None:
    from lbctl.sandbox import extensible_cluster
    from tests.live.live_helpers import TOKENS

    ext = extensible_cluster(tokens=TOKENS)
    try:
        ext.set_dynamic(loadBalancerBrokerLoadTargetStd="0.5")
        out = tmp_path / "ext.json"
        res = Lbctl(ext)("snapshot", "export", "-f", str(out))
        assert res.exit_code == 0, res.output
        doc = json.loads(out.read_text())
        assert doc["loadManager"] == "extensible"
        assert doc["dynamicConfig"] == {"loadBalancerBrokerLoadTargetStd": "0.5"}
    finally:
        ext.stop()
