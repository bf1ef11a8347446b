"""`lbctl assign-preview`: where unowned bundles would be assigned now — a new namespace's, a
stopped broker's, a topic's — before creating the namespace or stopping the broker
(:mod:`lbctl.loadmanager.assign`). Read-only: on a snapshot (``--snapshot FILE``) or the live
cluster."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, ClassVar

import typer

from lbctl.cli.common import LoadManagerChoice, Shown
from lbctl.cli.groups import Fields, grouped
from lbctl.cli.state import StateArgs


class AssignSnapshot(StateArgs, frozen=True):
    """``--snapshot FILE``: preview on a snapshot (the last one of a sequence), else live."""

    announce: ClassVar[bool] = False

    snapshot: Annotated[Path | None, typer.Option(
        "--snapshot", metavar="FILE",
        help="Preview on this snapshot (the last one of a sequence) instead of a live cluster.")] \
        = None

    @property
    def files(self) -> Sequence[Path]:
        return [self.snapshot] if self.snapshot is not None else []


@grouped
def assign_preview(
    ctx: typer.Context,
    *,
    namespace: Annotated[str | None, typer.Option(
        "--namespace", metavar="TENANT/NAMESPACE",
        help="A namespace to create (or an existing one): where its unowned bundles go.")]
        = None,
    bundles: Annotated[int | None, typer.Option(
        "--bundles", metavar="N", min=1, max=65536,
        help="With --namespace: the new namespace's bundle count (pulsar-admin namespaces "
             "create --bundles); default: defaultNumberOfNamespaceBundles.")] = None,
    broker_stopped: Annotated[str | None, typer.Option(
        "--broker-stopped", metavar="BROKER",
        help="A broker to stop (host:port): where each of its bundles goes.")] = None,
    topic: Annotated[str | None, typer.Option(
        "--topic", metavar="TOPIC",
        help="A topic (persistent://tenant/namespace/topic): where its bundle goes.")] = None,
    given: AssignSnapshot,
    lm: Annotated[LoadManagerChoice, Fields("placement", "set_", "broker_conf", "seed",
                                            "pulsar_version")],
    shown: Shown,
) -> None:
    """Preview where unowned bundles would be assigned now, before acting.

    Runs the cluster's own assignment path over the current loads, one lookup after another:
    the modular load manager's selectBrokerForAssignment (namespace policies, the broker filters,
    the placement strategy, the overload re-check; each pick preallocated, so the next lookup
    sees it) or the extensible one's (its filters, then LeastResourceUsageWithWeight). Give one
    of --namespace (a new namespace's bundles, --bundles N of them), --broker-stopped (the
    bundles a stopped broker leaves) or --topic (its bundle). Nothing is changed.

    \b
    Examples:
      lbctl assign-preview --namespace acme/new --bundles 8 --snapshot s.json
      lbctl assign-preview --broker-stopped b-3:8080 --snapshot s.json -o json
      lbctl assign-preview --topic persistent://acme/orders/t1 --snapshot s.json
      lbctl --admin-url http://pulsar:8080 assign-preview --namespace acme/new-ns
    """
    from lbctl.admin.client import split_namespace
    from lbctl.cli.state import choose
    from lbctl.errors import UsageError
    from lbctl.loadmanager import assign
    from lbctl.loadmanager.select import resolve_settings, version_warnings
    from lbctl.records import replace
    from lbctl.render.assign_view import AssignView

    asked = [x for x in (namespace, broker_stopped, topic) if x is not None]
    if len(asked) != 1:
        raise UsageError("give exactly one of --namespace, --broker-stopped, --topic")
    if bundles is not None and namespace is None:
        raise UsageError("--bundles goes with --namespace")
    if namespace is not None:
        split_namespace(namespace)  # Pulsar's naming rules, before anything is read
    chosen = choose(ctx, given)
    opts = replace(lm.options(), live=chosen.source.live)
    state = chosen.read().last
    settings = resolve_settings([state], opts)[0]
    warnings = version_warnings([state], opts)
    if namespace is not None:
        kind, subject = assign.NAMESPACE, namespace
        todo = assign.namespace_bundles(state, settings, namespace, bundles)
        stopped = None
    elif broker_stopped is not None:
        kind = assign.STOPPED
        subject = stopped = broker_stopped.removeprefix("http://").removeprefix(
            "https://").rstrip("/")
        todo = assign.stopped_bundles(state, stopped)
    else:
        assert topic is not None
        kind, subject, stopped = assign.TOPIC, topic, None
        todo = [assign.topic_bundle(state, settings, topic)]
    result = assign.preview(state, settings, opts, kind=kind, subject=subject, bundles=todo,
                            stopped=stopped, warnings=warnings)
    shown.emit(AssignView(result))
