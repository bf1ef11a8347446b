"""The live source's ownership read (:mod:`lbctl.sources.live_ownership`): every broker's
``ownedNamespaces`` at once, the reports for a broker that does not answer, and the reports with a
note when the cluster refuses it."""

from __future__ import annotations

import pytest

from lbctl.admin.client import unload_call
from lbctl.sources.live import LiveSource
from tests.sandbox.life_helpers import living_hot, run_for

pytestmark = pytest.mark.live


def test_a_cluster_refusing_ownedNamespaces_falls_back_to_the_reports_with_a_note() -> None:
    from lbctl.admin.client import AdminClient
    from lbctl.sandbox import Fault

    c, _life, _clock = living_hot(2, reconnect=0.0)
    try:
        c.faults.append(Fault(path="/ownedNamespaces$", status=403,
                              reason="This operation requires super-user access"))
        with AdminClient(c.admin_url) as client:
            src = LiveSource(client, topics=False)
            src.ownership = True
            read = src.read()
        assert read.owners is None
        assert any("ownedNamespaces" in w and "super-user" in w for w in read.warnings)
        assert read.state.owners()  # the reports still give the ownership
    finally:
        c.stop()


def test_ownership_read_is_the_brokers_listing_and_reports_for_a_broker_that_failed() -> None:
    from lbctl.admin.client import AdminClient
    from lbctl.sandbox import Fault

    c, _life, clock = living_hot(3, reconnect=0.0)
    try:
        a, b, z = list(c.brokers)
        bundle = sorted(c.bundles_of(a))[0]
        with AdminClient(c.admin_url) as client:
            ns, rng = bundle.rsplit("/", 1)
            client.request(unload_call(ns, rng, b))
        run_for(_life, clock, 1)  # its clients reconnect; no report is rewritten in 1 s
        assert c.owners[bundle] == b
        c.faults.append(Fault(path=f"/{z}/ownedNamespaces$", status=500, reason="boom"))
        with AdminClient(c.admin_url) as client:
            src = LiveSource(client, topics=False)
            src.ownership = True
            read = src.read()
        assert read.owners is not None
        assert read.state.owners()[bundle] == a and read.owners[bundle] == b
        of_z = {x for x, o in read.state.owners().items() if o == z and x.count("/") == 2}
        assert of_z and all(read.owners[x] == z for x in of_z)
        # the heartbeat bundles never move: left out of the listings (z's comes from its report)
        assert not any(x.startswith("pulsar/") and o != z for x, o in read.owners.items())
        assert any("did not answer ownedNamespaces" in w for w in read.warnings)
    finally:
        c.stop()
