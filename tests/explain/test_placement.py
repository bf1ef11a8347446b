"""What explain says of the placement data beside load (:mod:`lbctl.explain.placement`)."""

from __future__ import annotations

from lbctl.config import Settings
from lbctl.explain.placement import placement_data_lines
from lbctl.model.policies import ClusterPolicies, IsolationPolicy
from lbctl.records import replace
from tests.factories import broker, state


def test_a_policy_naming_host_port_is_called_out() -> None:
    """``LoadManagerShared.applyNamespacePolicies`` matches broker regexes against hosts: a policy
    naming ``b1:8080`` matches no broker (Pulsar issue #15795), and explain says why."""
    st = state({"b1:8080": broker(), "b2:8080": broker()})
    by_id = IsolationPolicy(("t/gold",), ("b1:8080",), name="gold")
    by_host = IsolationPolicy(("t/silver",), ("b2",), name="silver")
    lines = placement_data_lines(replace(st, policies=ClusterPolicies((by_id, by_host))),
                                 Settings.defaults())
    said = [x for x in lines if x.startswith("Isolation policy")]
    assert said == ["Isolation policy gold names b1:8080 by host:port, but Pulsar matches its "
                    "regexes against each broker's host: it matches no broker"]
