"""What ``lbctl doctor`` reads from a running cluster: its state (the same read as every other
live command: the reader of the live cluster source the CLI chose, :mod:`lbctl.sources.cluster`),
its dynamic configuration
(:mod:`lbctl.sources.live_dynamic`, as that read asked for it) and each broker's version, load manager and leadership
(:func:`lbctl.sources.live_brokers.read_brokers`). Brokers or pieces that could not be read are
kept as ``unreachable`` (the report lists them; they are not fatal unless nothing answered)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lbctl.admin.errors import AdminError
from lbctl.doctor.context import BrokerFacts
from lbctl.model.cluster import ClusterState

if TYPE_CHECKING:
    from lbctl.sources.live import LiveSource


@dataclass
class LiveFacts:
    """One live read for doctor."""

    state: ClusterState
    dynamic: dict[str, str] = field(default_factory=dict)
    facts: list[BrokerFacts] = field(default_factory=list)
    unreachable: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_live(reader: LiveSource) -> LiveFacts:
    """The cluster ``reader`` reads (on its open client): state, dynamic configuration,
    per-broker facts. The dynamic configuration is the one the read itself asked for (beside the
    runtime configuration, :meth:`LiveSource.discover`): one request a run, not a second."""
    from lbctl.sources.live_brokers import read_brokers

    client = reader.client
    read = reader.read()
    out = LiveFacts(read.state, warnings=list(read.warnings))
    out.unreachable += [(f.broker, f.error) for f in read.failures]
    if reader.stored_error is not None:
        out.unreachable.append(("dynamic configuration", str(reader.stored_error)))
    else:
        out.dynamic = dict(reader.stored)
    try:
        listed = read_brokers(client)
    except AdminError as e:
        out.unreachable.append(("broker versions", str(e)))
        from lbctl.doctor.context import facts_from_state

        out.facts = list(facts_from_state(read.state))
    else:
        out.facts = [BrokerFacts(b.broker, b.version, b.load_manager, b.leader)
                     for b in listed.brokers]
        out.unreachable += [(b.broker, b.error) for b in listed.brokers
                            if not b.answered and b.error and b.broker not in read.state.brokers]
    return out
