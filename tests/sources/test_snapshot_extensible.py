"""The extensible load manager's sections of a snapshot: ``brokerLoadData`` and
``topBundlesLoadData`` read into typed records, validated, and written back."""

from __future__ import annotations

import pytest

from lbctl.config import Settings
from lbctl.errors import SnapshotFormatError
from lbctl.model.brokerload import first_sample
from lbctl.sources.snapshot_schema import parse_broker_load_data, parse_top_bundles


def test_parse_and_first_sample():
    raw = {"cpu": {"usage": 60, "limit": 100}, "msgThroughputIn": 10, "msgThroughputOut": 20,
           "updatedAt": 5}
    pub = parse_broker_load_data(raw, "f.json", 'brokerLoadData["b"]')
    assert not pub.has_features and pub.reconstructed == ()
    d = pub.data
    assert d.weightedMaxEMA == 1.0  # the Java default until a sample is taken
    d = first_sample(d, Settings.defaults(), now=9)
    assert d.weightedMaxEMA == pytest.approx(0.6) and d.msgThroughputEMA == 30
    assert d.updatedAt == 5


@pytest.mark.parametrize("raw, path", [
    ({"cpu": 3}, 'brokerLoadData["b"].cpu'),
    ({"msgThroughputIn": -1}, 'brokerLoadData["b"].msgThroughputIn'),
    ({"bundleCount": 1.5}, 'brokerLoadData["b"].bundleCount'),
    ({"weightedMaxEMA": "x"}, 'brokerLoadData["b"].weightedMaxEMA'),
])
def test_bad_broker_load_data_names_the_path(raw, path):
    with pytest.raises(SnapshotFormatError) as e:
        parse_broker_load_data(raw, "f.json", 'brokerLoadData["b"]')
    assert path in str(e.value) and "f.json" in str(e.value)


def test_bad_top_bundles():
    with pytest.raises(SnapshotFormatError, match=r"topBundlesLoadData\[0\].bundleName"):
        parse_top_bundles({"topBundlesLoadData": [{"bundleName": 3}]}, "f", "t")
