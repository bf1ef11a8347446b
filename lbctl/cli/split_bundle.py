"""`lbctl split-bundle`: where a split would cut a bundle and how its load would divide — and,
on a live cluster, the split itself.

Flags follow ``pulsar-admin namespaces split-bundle``. With ``--snapshot`` the command previews
offline. Without it, it reads the live cluster, shows the same preview
(:func:`~lbctl.loadmanager.split_preview.preview`), then sends the split through the executor: shown first,
confirmed, sent once, journaled. A ``LARGEST``/``HOT`` bundle is sent as the range the preview
resolved, so the split that happens is the one that was shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, ClassVar

import typer

from lbctl.cli.common import TABLE, LoadManagerChoice, Shown
from lbctl.cli.groups import Fields, grouped
from lbctl.cli.state import StateArgs
from lbctl.cli.unload import Mutating

if TYPE_CHECKING:
    from lbctl.cli.state import Chosen
    from lbctl.loadmanager.split_preview import SplitPreview, SplitRequest


class SplitSnapshot(StateArgs, frozen=True):
    """``--snapshot FILE``: preview offline on a snapshot, else on the live cluster (and split)."""

    announce: ClassVar[bool] = False

    snapshot: Annotated[Path | None, typer.Option(
        "--snapshot", metavar="FILE",
        help="Preview on this snapshot (the last one of a sequence) instead of a live cluster.")] \
        = None

    @property
    def files(self) -> Sequence[Path]:
        return [self.snapshot] if self.snapshot is not None else []


def _namespaces(ctx: typer.Context, incomplete: str) -> list[str]:
    from lbctl.cli.complete import namespaces

    return namespaces(ctx, incomplete)


@grouped
def split_bundle(
    ctx: typer.Context,
    *,
    namespace: Annotated[str, typer.Argument(metavar="TENANT/NAMESPACE", show_default=False,
                                             autocompletion=_namespaces,
                                             help="The namespace of the bundle.")],
    bundle: Annotated[str | None, typer.Option(
        "-b", "--bundle", metavar="RANGE",
        help="{start}_{end} of the bundle (0x00000000_0x40000000), or LARGEST / HOT.")] = None,
    bundle_type: Annotated[str | None, typer.Option(
        "-bt", "--bundle-type", metavar="LARGEST|HOT",
        help="Pick the bundle: LARGEST (most topics) or HOT (highest throughput).")] = None,
    split_algorithm_name: Annotated[str | None, typer.Option(
        "-san", "--split-algorithm-name", metavar="NAME",
        help="range_equally_divide, topic_count_equally_divide, specified_positions_divide or "
             "flow_or_qps_equally_divide; default: the broker's "
             "defaultNamespaceBundleSplitAlgorithm.")] = None,
    split_boundaries: Annotated[list[str] | None, typer.Option(
        "-sb", "--split-boundaries", metavar="POS",
        help="A split position for specified_positions_divide, hex (0x60000000) or decimal; "
             "repeatable.")] = None,
    unload: Annotated[bool, typer.Option(
        "-u", "--unload", help="Unload the new bundles right after the split.")] = False,
    given: SplitSnapshot,
    lm: Annotated[LoadManagerChoice, Fields("set_", "broker_conf", "pulsar_version")],
    sending: Mutating,
    shown: Shown,
) -> None:
    """Split a bundle as the broker would: preview the boundaries and children, then split.

    Shows where the algorithm cuts, each child bundle's range, its topics, message rate and
    throughput, and which broker keeps it. With --snapshot FILE it only previews, offline. On a
    live cluster (--admin-url or client.conf) it then prints the exact request, asks for
    confirmation (--yes skips it; --dry-run sends nothing) and splits.

    \b
    Examples:
      lbctl split-bundle my-tenant/my-ns -b 0x00000000_0x80000000 \\
          -san flow_or_qps_equally_divide --snapshot examples/flow-or-qps.json
      lbctl split-bundle acme/orders -bt HOT --snapshot snap.json -o json
      lbctl split-bundle acme/orders -b 0x40000000_0x80000000 \\
          -san specified_positions_divide -sb 0x50000000 -sb 0x60000000 \\
          --snapshot snap.json
      lbctl --admin-url http://pulsar:8080 split-bundle acme/orders -bt HOT -u \\
          --dry-run
    """
    from lbctl.admin.client import split_namespace
    from lbctl.cli.state import choose
    from lbctl.executor import BUNDLE_KEYWORDS, parse_range
    from lbctl.loadmanager.select import resolve_settings
    from lbctl.loadmanager.split_preview import SplitRequest, preview
    from lbctl.records import replace
    from lbctl.render.split_view import SplitView

    split_namespace(namespace)  # Pulsar's naming rules, before anything else
    if bundle is not None and bundle.upper() not in BUNDLE_KEYWORDS:
        bundle = parse_range(namespace, bundle)  # tenant/ns/0x…_0x… as unload -b takes it
    if split_boundaries and split_algorithm_name != "specified_positions_divide":
        from lbctl.errors import UsageError

        raise UsageError("--split-boundaries needs --split-algorithm-name "
                         "specified_positions_divide (other algorithms ignore positions)")
    request = SplitRequest(
        namespace=namespace,
        bundle=bundle,
        bundle_type=bundle_type,
        algorithm=split_algorithm_name,
        positions=_positions(split_boundaries or []),
        unload=unload,
    )
    request.target()  # flag combination errors first, as pulsar-admin does
    chosen = choose(ctx, given)
    opts = replace(lm.options(), live=chosen.source.live)  # a live read's release: "(cluster)"
    state = chosen.read().last
    pv = preview(state, resolve_settings([state], opts)[-1], request)
    if not chosen.source.live:
        shown.emit(SplitView(pv))
        return
    _split_live(chosen, pv, request, sending, shown)


def _split_live(chosen: Chosen, pv: SplitPreview, request: SplitRequest, sending: Mutating,
                shown: Shown) -> None:
    """The live preview shown, then ``PUT …/{bundle}/split`` sent through the executor."""
    import sys

    from lbctl.cli.actions import execute
    from lbctl.executor import check_bundle, split_mutation
    from lbctl.render import render
    from lbctl.render.split_view import SplitView

    # The preview is for people: on stdout in table form, on stderr when stdout is for machines.
    render(SplitView(pv), "table", sys.stdout if shown.output == TABLE else sys.stderr)
    rng = pv.bundle.rpartition("/")[2]
    mutation = split_mutation(
        pv.namespace, rng, unload=request.unload, algorithm=request.algorithm,
        boundaries=list(request.positions) or None)
    with chosen.session() as cluster:
        check_bundle(cluster.client, pv.namespace, rng)
        execute(cluster.client, [mutation], dry_run=sending.dry_run, yes=sending.yes,
                journal=sending.journal, output=shown.output, force=sending.force)


def _positions(values: list[str]) -> tuple[int, ...]:
    """-sb values: each a ``Long.decode`` number (hex or decimal); commas also separate."""
    from lbctl.errors import UsageError
    from lbctl.model.bundle import BundleNameError, parse_position

    out = []
    for v in values:
        for item in v.split(","):
            if not item.strip():
                continue
            try:
                out.append(parse_position(item))
            except BundleNameError as e:
                raise UsageError(f"--split-boundaries: {e}") from None
    return tuple(out)
