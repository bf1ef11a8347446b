"""Every reader of a live read's settings resolves them with the values stored by
``update-dynamic-config`` (``GET /admin/v2/brokers/configuration/values``) over the runtime
configuration, by one function (:func:`lbctl.config.resolve`, through ``of_state`` and
``live_settings``), and says where a value came from: ``apply``'s re-validation,
``monitor-brokers``, the extensible reader's rebuilt load data and the sandbox's leader.

A broker applies a stored value over broker.conf's at start and on every change of the node
(``BrokerService.handleDynamicConfigurationUpdates`` → ``configValueChanged``); until the admin-URL
broker has done so, its runtime configuration still shows the old value. The ``stale`` transport
below plays that moment: it passes every request to the loopback cluster and puts the old value
back into the runtime configuration, so that only the dynamic layer can give the new one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx  # noqa: TID253  # a proxy in front of the loopback cluster, behind the client's transport
import pytest

from lbctl.admin.client import AdminClient
from lbctl.config import DYNAMIC_ORIGIN
from lbctl.sandbox import TestCluster, extensible_cluster, hot_cluster

pytestmark = pytest.mark.live

THRESHOLD = "loadBalancerBrokerOverloadedThresholdPercentage"
TOP_K = "loadBalancerMaxNumberOfBundlesInBundleLoadReport"


@contextmanager
def stale_client(c: TestCluster, **runtime: str) -> Iterator[AdminClient]:
    """A client of the loopback cluster whose runtime configuration shows ``runtime``'s values
    (the admin-URL broker has not applied the stored ones yet)."""
    with httpx.Client(timeout=10) as real:

        def handler(req: httpx.Request) -> httpx.Response:
            resp = real.send(httpx.Request(req.method, req.url, headers=req.headers))
            if req.url.path.endswith("/brokers/configuration/runtime"):
                return httpx.Response(200, json={**resp.json(), **runtime})
            return httpx.Response(resp.status_code, headers=resp.headers, content=resp.content)

        with AdminClient(c.admin_url, transport=httpx.MockTransport(handler),
                         retries=0) as client:
            yield client


@pytest.fixture
def hot() -> Iterator[TestCluster]:
    """Three brokers, the first at 90 % CPU."""
    c = hot_cluster(3)
    yield c
    c.stop()


# --- apply --------------------------------------------------------------------------------------
def test_apply_revalidation_takes_the_stored_threshold(hot: TestCluster) -> None:
    """Stored 95 over a runtime 85: the hot broker (90 %) is not overloaded for the run."""
    from lbctl.apply.live import read_live

    hot.set_dynamic(**{THRESHOLD: "95"})
    first = next(iter(hot.brokers))
    with stale_client(hot, **{THRESHOLD: "85"}) as client:
        view = read_live(client, topics=False)
    assert view.settings[THRESHOLD] == 95
    assert view.settings.origin(THRESHOLD) == DYNAMIC_ORIGIN
    assert view.threshold_note == ", dynamic config"
    assert first not in view.overloaded()


def test_apply_says_a_refusal_quotes_the_stored_threshold(tmp_path: Any) -> None:
    """``lbctl apply`` refuses a move to a broker over the stored threshold and says where the
    threshold came from."""
    from tests.apply.apply_helpers import lbctl, plan_doc, write_plan

    c = hot_cluster(3)
    try:
        c.set_dynamic(**{THRESHOLD: "80"})
        ids = list(c.brokers)
        bundle = sorted(c.bundles_of(ids[1]))[0]
        plan = write_plan(tmp_path / "plan.json", plan_doc(c, [(bundle, ids[1], ids[0])]))
        r = lbctl(c, "apply", str(plan), "--yes")
        text = " ".join((r.stdout + r.stderr).split())
        assert f"destination {ids[0]} is overloaded now" in text, text
        assert "(90.0% >= 80%, dynamic config)" in text, text
    finally:
        c.stop()


# --- monitor-brokers ----------------------------------------------------------------------------
def test_monitor_takes_the_stored_threshold_and_says_so(hot: TestCluster) -> None:
    import lbctl.monitor.live as live
    from lbctl.monitor.brokers import BrokerMonitor
    from lbctl.render.monitor import MonitorView
    from lbctl.sources.live import LiveSource

    hot.set_dynamic(**{THRESHOLD: "95"})
    first = next(iter(hot.brokers))
    mon = BrokerMonitor()
    with stale_client(hot, **{THRESHOLD: "85"}) as client:
        src = LiveSource(client, topics=False, namespaces=False)
        for _ in range(2):  # the first refresh, then one that asks with the known brokers
            ref = live.live_refresh(src, mon, [85.0])
            assert ref.threshold == 95 and ref.threshold_origin == DYNAMIC_ORIGIN
            assert not next(r for r in ref.rows if r.broker == first).overloaded
    text = " ".join(MonitorView(ref).to_text().split())
    assert "(loadBalancerBrokerOverloadedThresholdPercentage, dynamic config;" in text


def test_monitor_without_a_stored_value_says_nothing_more(hot: TestCluster) -> None:
    import lbctl.monitor.live as live
    from lbctl.monitor.brokers import BrokerMonitor
    from lbctl.render.monitor import MonitorView
    from lbctl.sources.live import LiveSource

    with AdminClient(hot.admin_url, retries=0) as client:
        ref = live.live_refresh(LiveSource(client, topics=False, namespaces=False),
                                BrokerMonitor(), [85.0])
    assert ref.threshold == 85 and ref.threshold_origin != DYNAMIC_ORIGIN
    assert "(loadBalancerBrokerOverloadedThresholdPercentage; LOAD %" in " ".join(
        MonitorView(ref).to_text().split())


# --- the extensible reader -------------------------------------------------------------------------
def test_the_extensible_capture_rebuilds_with_the_stored_value() -> None:
    """``TopKBundles`` keeps ``loadBalancerMaxNumberOfBundlesInBundleLoadReport`` bundles: the
    stored 1, not the runtime configuration's 10, and the captured state says where it came
    from."""
    from lbctl.loadmanager.select import Options, settings_for
    from lbctl.sources.live import LiveSource
    from lbctl.sources.live_extensible import ExtensibleReader

    ext = extensible_cluster()
    try:
        ext.set_dynamic(**{TOP_K: "1"})
        with stale_client(ext, **{TOP_K: "10"}) as client:
            src = LiveSource(client)
            state = src.read().state
            tops = {b: len(t.bundles) for b, t in state.top_bundles_load_data.items()}
            assert tops and max(tops.values()) == 1, tops
            assert ExtensibleReader(src)._settings().origin(TOP_K) == DYNAMIC_ORIGIN
        assert any(len(ext.bundles_of(b)) > 1 for b in tops)  # (else the test proves nothing)
        assert dict(state.dynamic_config) == {TOP_K: "1"}
        settings = settings_for(state, Options(), {})
        assert settings[TOP_K] == 1 and settings.origin(TOP_K) == DYNAMIC_ORIGIN
    finally:
        ext.stop()


# --- the sandbox's leader -------------------------------------------------------------------------
def test_the_sandbox_leader_observes_the_stored_values() -> None:
    """The leader's state is what a live read captures: ``dynamicConfig`` included, so its
    settings say where a stored value came from."""
    from lbctl.loadmanager.select import Options, settings_for
    from tests.sandbox.life_helpers import living_hot

    c, life, clock = living_hot(3)
    try:
        c.set_dynamic(**{THRESHOLD: "70"})
        assert life.leader is not None
        state = life.leader.observe(int(clock.now() * 1000))
        assert dict(state.dynamic_config) == {THRESHOLD: "70"}
        settings = settings_for(state, Options(), {})
        assert settings[THRESHOLD] == 70 and settings.origin(THRESHOLD) == DYNAMIC_ORIGIN
    finally:
        c.stop()


# --- one read of /configuration/values ------------------------------------------------------------
def test_a_live_read_asks_for_the_dynamic_configuration_once_beside_the_runtime(
        hot: TestCluster) -> None:
    from lbctl.sources.live import LiveSource

    hot.set_dynamic(**{THRESHOLD: "95"})
    with AdminClient(hot.admin_url, retries=0) as client:
        got = LiveSource(client).read()
    paths = [r.path for r in hot.log]
    assert paths.count("/admin/v2/brokers/configuration/values") == 1
    assert got.snapshot.dynamicConfig == {THRESHOLD: "95"}


# --- AdminApiDynamicConfigurationsTest.testDeleteIntDynamicConfig, ported ----------------------------
def test_a_deleted_value_reverts_to_the_one_the_broker_started_with(hot: TestCluster) -> None:
    """Pulsar's ``AdminApiDynamicConfigurationsTest.testDeleteIntDynamicConfig`` (PR #22673):
    an update takes effect, and ``delete-dynamic-config`` reverts the field to the value the
    broker started with (``BrokerService.configValueChanged`` with no value: the field's value
    when ``dynamicConfigurationMap`` was prepared, broker.conf's). The same monitor, refresh after
    refresh, follows it: the stored value and its origin, then the runtime value again — no
    stored value is kept from an earlier refresh."""
    import lbctl.monitor.live as live
    from lbctl.monitor.brokers import BrokerMonitor
    from lbctl.sources.live import LiveSource

    url = f"{hot.admin_url}/admin/v2/brokers/configuration"
    mon = BrokerMonitor()
    with AdminClient(hot.admin_url, retries=0) as client:
        src = LiveSource(client, topics=False, namespaces=False)
        before = live.live_refresh(src, mon, [85.0])
        assert before.threshold == 85 and before.threshold_origin != DYNAMIC_ORIGIN
        assert httpx.post(f"{url}/{THRESHOLD}/95", timeout=5).status_code == 204
        during = live.live_refresh(src, mon, [85.0])
        assert during.threshold == 95 and during.threshold_origin == DYNAMIC_ORIGIN
        assert httpx.delete(f"{url}/{THRESHOLD}", timeout=5).status_code == 204
        after = live.live_refresh(src, mon, [85.0])
        assert after.threshold == 85 and after.threshold_origin != DYNAMIC_ORIGIN
        assert src.last_dynamic == {}
