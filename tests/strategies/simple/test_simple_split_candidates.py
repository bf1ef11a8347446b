"""``SimpleLoadManagerImpl.doNamespaceBundleSplit``'s scan of one report
(:func:`lbctl.strategies.simple.split.simple_split_candidates`): the report's own figures, the
namespace count read per bundle and never raised by the scan's earlier picks."""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.model.decision import Reason
from lbctl.model.load import NamespaceBundleStats
from lbctl.strategies.simple.split import simple_split_candidates
from lbctl.strategies.split.bundle_splitter_task import SplitterWhy


def _hot(topics: int = 3) -> NamespaceBundleStats:
    return NamespaceBundleStats(topics=topics, msgRateIn=20_000.0, msgRateOut=20_000.0)


def test_the_namespace_count_is_read_per_bundle() -> None:
    stats = {"t/ns/0x00000000_0x80000000": _hot(), "t/ns/0x80000000_0xffffffff": _hot(),
             "t/other/0x00000000_0xffffffff": _hot(1)}
    s = Settings.defaults().with_values(loadBalancerNamespaceMaximumBundles=3)
    got = simple_split_candidates("b1", stats, s, lambda ns: 2)
    assert [(c.bundle, c.reason, c.selected) for c in got] == [
        ("t/ns/0x00000000_0x80000000", Reason.MSG_RATE, True),
        ("t/ns/0x80000000_0xffffffff", Reason.MSG_RATE, True)]
    full = simple_split_candidates("b1", stats, s, lambda ns: 3)
    assert [c.selected for c in full] == [False, False]
    assert full[0].why == SplitterWhy("namespace-full", "t/ns", 3, 0, 3)
