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


def test_ids_without_a_port_are_not_said_to_be_named_by_host_port() -> None:
    """Broker ids without ``:`` give ``parseBrokerHost`` no host: every policy check skips them.
    A policy naming their hosts was said to name them "by host:port" — their ids have no port;
    explain now says what happens to them instead."""
    st = state({"b1": broker(), "b2:8080": broker()})
    named = IsolationPolicy(("t/gold",), ("b1",), name="gold")
    lines = placement_data_lines(replace(st, policies=ClusterPolicies((named,))),
                                 Settings.defaults())
    assert not [x for x in lines if "by host:port" in x]
    assert ("No host in the id of b1 (no ':port'): Pulsar cannot take a host to match the "
            "namespace policies against and skips it as a placement candidate of every namespace"
            in lines)
