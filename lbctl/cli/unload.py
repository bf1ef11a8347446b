"""`lbctl unload`: pulsar-admin's `namespaces unload`, shown first, confirmed, journaled."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from lbctl.cli.common import Shown
from lbctl.cli.groups import Fields, OptionGroup, grouped

DryRun = Annotated[bool, typer.Option("--dry-run", help="Show the requests; send nothing.")]
Yes = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
Force = Annotated[bool, typer.Option(
    "--force", help="Send even when the journal shows the same request within the grace period "
    "(loadBalancerSheddingGracePeriodMinutes, 30 min by default).")]
Journal = Annotated[Path | None, typer.Option(
    "--journal", metavar="FILE",
    help="Append what is sent to this JSON-lines file (default $LBCTL_JOURNAL, else "
         "$XDG_STATE_HOME/lbctl/journal.jsonl).")]


class Mutating(OptionGroup, frozen=True):
    """``--dry-run --yes --force --journal``: how a change is sent (shown, confirmed, journaled)."""

    dry_run: DryRun = False
    yes: Yes = False
    force: Force = False
    journal: Journal = None

    def __post_init__(self) -> None:
        """A journal named by a link, or a directory, is refused before the cluster is asked
        anything (the executor would refuse it only after the command had read and validated)."""
        if self.journal is not None:
            from lbctl.errors import ConfigError
            from lbctl.safe.files import refuse_unwritable

            refuse_unwritable(self.journal, what="a journal file (JSON lines)",
                              error=lambda m: ConfigError(f"{m}; nothing was sent"))


@grouped
def unload(
    ctx: typer.Context,
    *,
    namespace: Annotated[str, typer.Argument(metavar="TENANT/NAMESPACE", show_default=False)],
    bundle: Annotated[str | None, typer.Option(
        "-b", "--bundle", metavar="{start}_{end}", help="Unload this bundle only.")] = None,
    destination: Annotated[str | None, typer.Option(
        "-d", "--destinationBroker", "--destination-broker", metavar="BROKER",
        help="Move the bundle to this active broker (needs --bundle).")] = None,
    sending: Mutating,
    shown: Annotated[Shown, Fields("output")],
) -> None:
    """Unload a namespace, or one of its bundles, from the broker serving it.

    Checks first that the namespace and bundle exist (else exit 2) and the destination is an
    active broker, prints the exact request, asks for confirmation on a terminal (--yes skips it;
    without a terminal it sends nothing and exits 12),
    then sends it once and appends it to the journal. The same request again within the grace
    period (30 min) is refused unless --force.

    \b
    Examples:
      lbctl --admin-url http://pulsar:8080 unload public/default \\
          -b 0x40000000_0x80000000 --dry-run
      lbctl unload public/default -b 0x40000000_0x80000000 \\
          -d broker-2.pulsar.svc:8080 --yes
    """
    from lbctl.admin.client import split_namespace
    from lbctl.cli.actions import execute
    from lbctl.cli.connection import open_client
    from lbctl.errors import UsageError
    from lbctl.executor import check_bundle, check_destination, parse_range, unload_mutation

    split_namespace(namespace)
    if destination and not bundle:
        raise UsageError("--destinationBroker cannot be set when --bundle is not specified.")
    rng = parse_range(namespace, bundle) if bundle else None
    with open_client(ctx) as client:
        check_namespace(client, namespace)
        if rng:
            check_bundle(client, namespace, rng)
        dest = check_destination(client, destination) if destination else None
        execute(client, [unload_mutation(namespace, rng, dest)], dry_run=sending.dry_run,
                yes=sending.yes, journal=sending.journal, output=shown.output,
                force=sending.force)


def check_namespace(client: Any, namespace: str) -> None:
    """An unknown namespace is a usage error (exit 2), as an unknown bundle or broker is, whether
    a snapshot or the cluster says so — not the 404 (exit 7) Pulsar's unload would answer."""
    from lbctl.admin.errors import NotFound
    from lbctl.errors import UsageError

    try:
        client.bundles(namespace)
    except NotFound:
        raise UsageError(f"namespace {namespace} does not exist (GET its bundles: 404)") from None
