"""`lbctl brokers`: list the active brokers (version, load manager, leader, answered)."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl.cli.common import Shown
from lbctl.cli.groups import grouped


@grouped
def brokers(
    ctx: typer.Context,
    *,
    leader: Annotated[bool, typer.Option(
        "--leader", help="Print only the leader broker (the one whose load manager sheds).")]
        = False,
    shown: Shown,
) -> None:
    """List the cluster's active brokers: Pulsar version, load manager, leader, and whether each
    answered.

    Works on both load managers (the leader is elected the same way). Like pulsar-admin's
    `brokers list` and `brokers leader-broker` together, with each broker asked directly.

    \b
    Examples:
      lbctl --admin-url http://pulsar:8080 brokers
      lbctl brokers --leader
      lbctl brokers -o json
    """
    from lbctl.cli.connection import open_client
    from lbctl.errors import LbctlError
    from lbctl.render.brokers_view import BrokersView
    from lbctl.sources.live_brokers import read_brokers

    with open_client(ctx) as client:
        found = read_brokers(client)
    if leader and found.leader is None:
        raise LbctlError(f"no leader broker in {found.cluster} right now"
                         + (f": {found.leader_error}" if found.leader_error else ""))
    shown.emit(BrokersView(found, leader_only=leader))
