"""The stored resource quotas SimpleLoadManagerImpl starts from: default and per bundle.

Ported from Pulsar's ``BundlesQuotasTest`` (pulsar-broker/src/test/java/org/apache/pulsar/broker/
cache/, at 1710bfda; ``BundlesQuotas.INITIAL_QUOTA``) and its
predecessor ``ResourceQuotaCacheTest`` (ac262917: the same two methods over ZooKeeper,
``ResourceQuotaCache.getInitialQuotaValue``). lbctl reads the quotas from a snapshot's
``resourceQuotas`` section instead of the metadata store (``lbctl.loadmanager.simple.
stored_quotas``), so a ``set`` is a section that names the quota and a ``reset`` is one that no
longer does; ``Stored.quota`` is ``getResourceQuota``'s answer when no realtime quota was learnt.
Also ``ResourceQuotaTest`` (pulsar-common/src/test/java/org/apache/pulsar/common/policies/data/,
1c46eb24): a new quota's figures, and ``ResourceQuota.equals`` over every field.
"""

from __future__ import annotations

from lbctl.loadmanager.simple import stored_quotas
from lbctl.model.wire.snapshot import ResourceQuota as WireQuota
from lbctl.model.wire.snapshot import ResourceQuotas
from lbctl.records import replace
from lbctl.strategies.simple.quota import INITIAL_QUOTA, ResourceQuota
from tests.factories import state

#: ``new NamespaceBundle(pulsar/test/ns-2, [0, Integer.MAX_VALUE))``
TEST_BUNDLE = "pulsar/test/ns-2/0x00000000_0x7fffffff"
#: the tests' ``quota2``: 10 / 20 msg/s, 10000 / 20000 bytes/s, 100 MB, not dynamic
QUOTA2 = ResourceQuota(10.0, 20.0, 10000.0, 20000.0, 100.0, False)
WIRE_QUOTA2 = WireQuota(10.0, 20.0, 10000.0, 20000.0, 100.0, False)


def stored(section: ResourceQuotas | None):
    return stored_quotas(replace(state({}), resource_quotas=section))


def test_initial_quota_value() -> None:
    """``INITIAL_QUOTA``: 40 / 120 msg/s, 100000 / 300000 bytes/s, 80 MB, dynamic."""
    assert ResourceQuota(40.0, 120.0, 100000.0, 300000.0, 80.0, True) == INITIAL_QUOTA


def test_get_set_default_quota() -> None:
    """``testGetSetDefaultQuota``: the default quota is ``INITIAL_QUOTA`` until one is set, then
    the one set; a bundle without its own quota takes it."""
    assert stored(None).default == INITIAL_QUOTA
    assert stored(ResourceQuotas()).default == INITIAL_QUOTA
    after = stored(ResourceQuotas(default=WIRE_QUOTA2))
    assert after.default == QUOTA2
    assert after.quota(TEST_BUNDLE, {}) == QUOTA2


def test_get_set_bundle_quota() -> None:
    """``testGetSetBundleQuota``: a bundle's quota is the default (``INITIAL_QUOTA``) until one is
    set for it, the one set after, and the default again once it is reset."""
    assert stored(None).quota(TEST_BUNDLE, {}) == INITIAL_QUOTA
    after_set = stored(ResourceQuotas(bundles={TEST_BUNDLE: WIRE_QUOTA2}))
    assert after_set.quota(TEST_BUNDLE, {}) == QUOTA2
    # another bundle of the namespace keeps the default
    assert after_set.quota("pulsar/test/ns-2/0x7fffffff_0xffffffff", {}) == INITIAL_QUOTA
    after_reset = stored(ResourceQuotas(bundles={}))
    assert after_reset.quota(TEST_BUNDLE, {}) == INITIAL_QUOTA


def test_resource_quota_default() -> None:
    """``ResourceQuotaTest#testResourceQuotaDefault``: a new quota is all zeros and dynamic."""
    assert ResourceQuota() == ResourceQuota(0.0, 0.0, 0.0, 0.0, 0.0, True)
    assert WireQuota() == WireQuota(0.0, 0.0, 0.0, 0.0, 0.0, True)


def test_resource_quota_equal() -> None:
    """``ResourceQuotaTest#testResourceQuotaEqual``: two quotas are equal only once every figure
    and ``dynamic`` agree; setting them one by one leaves them different until the last."""
    quota2 = ResourceQuota()
    fields = ("msgRateIn", "msgRateOut", "bandwidthIn", "bandwidthOut", "memory", "dynamic")
    for name in fields:
        assert quota2 != QUOTA2
        quota2 = replace(quota2, **{name: getattr(QUOTA2, name)})
    assert quota2 == QUOTA2
