"""`lbctl brokers`: list the active brokers (version, load manager, leader, answered)."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl.cli.common import Shown
from lbctl.cli.groups import grouped


@grouped
def brokers(
    ctx: typer.Context,
    words: Annotated[list[str] | None, typer.Argument(
        hidden=True, show_default=False, metavar="[list [CLUSTER] | leader-broker]",
        help="pulsar-admin's words, taken as they mean: list [CLUSTER], leader-broker.")] = None,
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

    cluster = _pulsar_admin_words(words or [])
    if cluster == "leader-broker":
        leader, cluster = True, None
    with open_client(ctx) as client:
        found = read_brokers(client)
    if cluster is not None and cluster != found.cluster:
        raise LbctlError(f"the cluster at this admin URL is {found.cluster}, not {cluster}")
    if leader and found.leader is None:
        raise LbctlError(f"no leader broker in {found.cluster} right now"
                         + (f": {found.leader_error}" if found.leader_error else ""))
    shown.emit(BrokersView(found, leader_only=leader))


def _pulsar_admin_words(words: list[str]) -> str | None:
    """pulsar-admin's spelling, which its users type out of habit (the ``list`` and
    ``leader-broker`` subcommands of pulsar-admin's ``CmdBrokers``; ``list`` takes the cluster):
    ``brokers list [CLUSTER]`` (the cluster, checked against the one answering) and ``brokers
    leader-broker`` (returned as that word). Anything else is one line naming lbctl's spelling."""
    from lbctl.errors import UsageError

    if not words:
        return None
    if words[0] == "list" and len(words) <= 2:
        return words[1] if len(words) == 2 else None
    if words == ["leader-broker"]:
        return "leader-broker"
    raise UsageError(f"lbctl brokers takes no argument ({' '.join(words)!r}): it lists the "
                     "active brokers (pulsar-admin brokers list); --leader prints the leader "
                     "(pulsar-admin brokers leader-broker)")
