"""`lbctl explain`: the reasoning behind the load manager's decision, in numbers and words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

from lbctl.cli.common import AllCycles, LoadManagerChoice, Shown, Watching
from lbctl.cli.groups import grouped
from lbctl.cli.state import StateInput

if TYPE_CHECKING:
    from lbctl.model.cluster import ClusterState


def _brokers(ctx: typer.Context, incomplete: str) -> list[str]:
    from lbctl.cli.complete import brokers

    return brokers(ctx, incomplete)


def _bundles(ctx: typer.Context, incomplete: str) -> list[str]:
    from lbctl.cli.complete import bundles

    return bundles(ctx, incomplete)


@grouped
def explain(
    ctx: typer.Context,
    *,
    broker: Annotated[str | None, typer.Option(
        "--broker", metavar="BROKER", autocompletion=_brokers,
        help="Explain one broker only (its id, or its name as tables show it: broker-2).")] = None,
    bundle: Annotated[
        str | None, typer.Option("-b", "--bundle", metavar="BUNDLE", autocompletion=_bundles,
                                 help="Explain one bundle (tenant/ns/0x…_0x…).")
    ] = None,
    page: Annotated[int, typer.Option(
        "--page", metavar="N", min=1,
        help="The page of the long lists (a large cycle's unloads, candidates, brokers…) to "
             "show, from 1.")] = 1,
    limit: Annotated[int | None, typer.Option(
        "--limit", metavar="N", min=0,
        help="Items of a long list on a page (default 100); 0: every item (on a large "
             "cluster, hundreds of megabytes).")] = None,
    full_profile: Annotated[bool, typer.Option(
        "--profile",
        help="Every way the Pulsar release modelled differs from the newest (by default only "
             "those that bore on the decision, after it).")] = False,
    lm: LoadManagerChoice,
    all_cycles: AllCycles = False,
    watching: Watching,
    shown: Shown,
    given: StateInput,
) -> None:
    """Explain why the load manager unloads what it unloads — or why nothing happens.

    Shows each broker's resource usage and which resource won the weighted max, raw usage against
    the history-smoothed score, the average and threshold, every candidate bundle with why it was
    chosen or skipped, and the placement scores of each destination. It names the Pulsar release
    modelled, the gate that held and how many more cycles of this state would open it. A list
    longer than --limit (a large cycle's unloads, candidates, brokers) is shown a page at a time
    (--page).

    \b
    Examples:
      lbctl explain examples/rolling-restart.yaml
      lbctl explain examples/hot-broker.json --broker broker-1.pulsar.svc:8080
      lbctl explain snap.json -o json
      lbctl explain examples/hot-broker.json -o json --limit 2 --page 2

      lbctl explain examples/extensible/skewed.json --pulsar-version 3.1 --assume-steady
    """
    from shlex import quote

    from lbctl.cli.state import choose
    from lbctl.explain.paging import DEFAULT_LIMIT
    from lbctl.loadmanager.select import run
    from lbctl.progress import shown as progress
    from lbctl.records import replace
    from lbctl.render.views import ExplainView

    opts = lm.options(project=True)
    per_page = DEFAULT_LIMIT if limit is None else limit
    if bundle:
        bundle = check_bundle_name(bundle)
    if watching.asked:
        from lbctl.cli.watch import run_watch

        run_watch(ctx, opts, lambda r: ExplainView([r], broker, bundle, page=page, limit=per_page,
                                                 full_profile=full_profile),
                  shown.output, watching, given)
        return
    chosen = choose(ctx, given)
    opts = replace(opts, live=chosen.source.live)
    states = chosen.read().states
    where = "the cluster" if chosen.source.live else "the snapshot"  # a live read is no snapshot
    if broker is not None:
        broker = resolve_broker(broker, list(states[-1].brokers), where)
    if bundle is not None:
        check_known_bundle(bundle, states, where)
    with progress() as bar, bar.phase(f"running the load manager over {len(states)} cycle(s)"):
        results = run(states, opts)
    # the hints' commands name the files as given (a .jsonl state's source is FILE:LINE)
    files = " ".join(quote(str(a)) for a in [*given.files, *choice_flags(lm)])
    shown.emit(ExplainView(results, broker, bundle, all_cycles, page, per_page, full_profile,
                           files))


def choice_flags(lm: LoadManagerChoice) -> list[str]:
    """The load-manager flags as given (``--set`` in order), for a printed command that must
    decide as this one did: explain's hints, doctor's compare and explain fixes (walk25: they
    named neither the file nor ``--broker-conf``, so a copied command judged other settings)."""
    out: list[str] = []
    for flag, value in (("--strategy", lm.strategy), ("--placement", lm.placement),
                        ("--broker-conf", lm.broker_conf), ("--seed", lm.seed),
                        ("--pulsar-version", lm.pulsar_version)):
        if value is not None:
            out += [flag, str(value)]
    for assignment in lm.set_ or []:
        out += ["--set", assignment]
    return out + (["--assume-steady"] if lm.assume_steady else [])


def resolve_broker(name: str, brokers: list[str], where: str = "the snapshot") -> str:
    """A broker id as given, or as the tables show it (``broker-2`` for
    ``broker-2.pulsar.svc:8080``: the one id that continues with ``.`` or ``:``)."""
    from lbctl.config import closest
    from lbctl.errors import UsageError
    from lbctl.safe.text import shorten

    if name in brokers:
        return name
    matches = [b for b in brokers if b.startswith(name) and b[len(name):][:1] in (".", ":")]
    if len(matches) == 1:
        return matches[0]
    hint = closest(name, brokers)
    raise UsageError(f"unknown broker {shorten(name, 120)!r}: not in {where}"
                     + (f" (did you mean {hint}?)" if hint else
                        f"; it has {', '.join(brokers[:5])}" + (", …" if len(brokers) > 5 else "")))


def check_known_bundle(bundle: str, states: Sequence[ClusterState],
                       where: str = "the snapshot") -> None:
    """``--bundle`` must name a bundle of the snapshots (owned, or one of a namespace's ranges)."""
    from lbctl.config import closest
    from lbctl.errors import UsageError
    from lbctl.safe.text import shorten

    known = {b for st in states for b in st.owners()} | {
        f"{ns}/{a}_{b}" for st in states for ns, bounds in st.namespaces.items()
        for a, b in zip([f"0x{x:08x}" for x in bounds],
                        [f"0x{x:08x}" for x in bounds[1:]], strict=False)}
    if bundle not in known:
        ns = bundle.rsplit("/", 1)[0] + "/"
        near = sorted(k for k in known if k.startswith(ns)) or sorted(known)
        hint = closest(bundle, near[:5000])
        raise UsageError(f"unknown bundle {shorten(bundle, 120)!r}: not in {where}"
                         + (f" (did you mean {hint}?)" if hint else ""))


def check_bundle_name(bundle: str) -> str:
    """Validate a ``--bundle`` argument (full name)."""
    from lbctl.errors import UsageError
    from lbctl.executor import bundle_error
    from lbctl.model.bundle import BundleName, BundleNameError

    try:
        return str(BundleName.parse(bundle))
    except BundleNameError as e:
        if "/" not in bundle:  # no range to blame: the name's shape is what is wrong
            raise UsageError(str(e)) from None
        raise UsageError(bundle_error(bundle, e)) from None
