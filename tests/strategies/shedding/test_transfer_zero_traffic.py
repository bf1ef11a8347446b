"""Bundles without traffic in the extensible load manager's top bundles, release by release.

PR #23626 changed two classes at once (3.3.3, 4.0.1): ``TopKBundles.update`` leaves a bundle whose
``msgThroughputIn + msgThroughputOut`` is 0 out of the top bundles a broker reports (the
``topKSkipsZeroThroughput`` variant; the stored TopKBundles of a release branch with the change
skips it before the system-namespace check), and TransferShedder skips one it still meets
(``transferSkipsZeroThroughput``). Which bundles are *reported* decides more than which are
walked: a broker whose only other top bundle is idle reports a single top bundle, and
TransferShedder never moves a broker's sole top bundle.
"""

from __future__ import annotations

import pytest

from lbctl.config import Settings
from lbctl.model.brokerload import TopBundle, top_k_bundles
from lbctl.model.decision import unloads_key
from lbctl.model.load import NamespaceBundleStats
from lbctl.records import replace
from lbctl.strategies.shedding.transfer import ShedderInput, TransferShedder
from lbctl.versions import resolve
from tests.ext_helpers import NOW, cpu_load, store, top_bundles

B = [f"broker{i}:8080" for i in range(1, 6)]
IDLE = "my-tenant/my-namespaceE/0x00000000_0x0FFFFFFF"
BUSY = "my-tenant/my-namespaceE/0x0FFFFFFF_0xFFFFFFFF"
D1 = "my-tenant/my-namespaceD/0x00000000_0x0FFFFFFF"


def _settings(version: str) -> Settings:
    return Settings.defaults(resolve(version)).with_values(
        loadBalancerDebugModeEnabled=True, loadBalancerSheddingBundlesWithPoliciesEnabled=False,
        loadBalancerSheddingConditionHitCountThreshold=0)


def _decisions(version: str) -> set[tuple[str, str, str | None, str, str]]:
    """TransferShedderTest's five brokers (CPU 2, 4, 6, 80, 90 %); the hottest one, broker5,
    reports an idle bundle beside a busy one of 3 MB/s, out of 8 MB/s it serves."""
    settings = _settings(version)
    tops: dict[str, tuple[TopBundle, ...]] = {}
    for b, (ns, l1, l2) in zip(B[:4], [("A", 1e6, 2e6), ("B", 1e6, 3e6), ("C", 2e6, 4e6),
                                       ("D", 2e6, 6e6)], strict=True):
        tops[b] = top_bundles(settings, f"my-tenant/my-namespace{ns}", l1, l2)
    tops[B[4]] = top_k_bundles([(IDLE, NamespaceBundleStats()),
                                (BUSY, NamespaceBundleStats(msgThroughputOut=3e6))], 2, settings)
    loads = {b: cpu_load(settings, load, tops[b])
             for b, load in zip(B[:4], [2, 4, 6, 80], strict=True)}
    loads[B[4]] = replace(cpu_load(settings, 90, tops[B[4]]), msgThroughputOut=8e6)
    ctx = ShedderInput(settings, NOW, store(loads), store(tops), list(B))
    return unloads_key(TransferShedder().find_bundles_for_unloading(ctx, 0).decisions)


def test_top_k_reports_the_idle_bundle_only_before_23626() -> None:
    stats = [(IDLE, NamespaceBundleStats(msgRateIn=10.0)),
             (BUSY, NamespaceBundleStats(msgThroughputOut=3e6))]
    assert [t.bundleName for t in top_k_bundles(stats, 2, _settings("4.0.0"))] == [IDLE, BUSY]
    assert [t.bundleName for t in top_k_bundles(stats, 2, _settings("3.3.2"))] == [IDLE, BUSY]
    for version in ("3.3.3", "4.0.1", "4.1.3", "4.2.5"):
        assert [t.bundleName for t in top_k_bundles(stats, 2, _settings(version))] == [BUSY]
    # -0.0 is no throughput either (a double sum compared with == 0)
    neg = [(IDLE, NamespaceBundleStats(msgThroughputIn=-0.0, msgThroughputOut=-0.0))]
    assert top_k_bundles(neg, 2, _settings("4.0.1")) == ()


@pytest.mark.parametrize("version, moved", [
    # before PR #23626 the idle bundle, first of the ascending top bundles, is moved (it never
    # overshoots the target); the busy one is then the broker's last top bundle and stays
    ("4.0.0", {("broker5:8080", IDLE, "broker1:8080", "Success", "Overloaded")}),
    ("3.3.2", {("broker5:8080", IDLE, "broker1:8080", "Success", "Overloaded")}),
    # from it the idle bundle is not reported: broker5 has a sole top bundle and sheds nothing
    ("4.0.1", set()),
    ("3.3.3", set()),
    ("4.2.5", set()),
])
def test_hottest_broker_with_an_idle_top_bundle(version: str,
                                                moved: set[tuple[str, ...]]) -> None:
    got = _decisions(version)
    assert {d for d in got if d[0] == "broker5:8080"} == moved
    # broker4 sheds as in TransferShedderTest's setup: its smaller bundle to the least loaded
    # broker not yet paired
    assert any(d[0] == "broker4:8080" and d[1] == D1 for d in got)
