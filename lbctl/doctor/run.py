"""Run every rule over a cluster: snapshots (or a live read) + options → :class:`Report`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lbctl.doctor.base import Finding, Report
from lbctl.doctor.builtin import RULES
from lbctl.doctor.context import BrokerFacts, Context, make
from lbctl.errors import UsageError
from lbctl.loadmanager.select import Options, profile_of, resolve_settings
from lbctl.model.cluster import ClusterState


def context_for(states: Sequence[ClusterState], opts: Options, *,
                dynamic: Mapping[str, str] | None = None,
                facts: Sequence[BrokerFacts] | None = None,
                unreachable: Sequence[tuple[str, str]] = (),
                files: Sequence[str] = (), flags: Sequence[str] = ()
                ) -> tuple[Context, list[str]]:
    """The rules' context (settings resolved as ``recommend`` resolves them), and the notes about
    the release modelled. ``files``: the snapshot files as given, and ``flags`` the settings
    flags (``--broker-conf``, ``--set``, ``--pulsar-version``), which the fixes' commands name."""
    if not states:
        raise UsageError("no snapshot given")
    settings = resolve_settings(states, opts)[-1]
    _, notes = profile_of(states, opts)
    # live: the command read the cluster, or the state says it was read live (lbctl watch
    # diagnoses each capture with the watcher's options, which name no source)
    return make(states, settings, dynamic=dynamic, facts=facts, unreachable=unreachable,
                live=opts.live or states[-1].live_read, files=files, flags=flags), notes


def run_rules(ctx: Context, only: Sequence[str] = (), skip: Sequence[str] = ()) -> list[Finding]:
    """Every rule's findings (worst first, then by rule id, each rule's in its own order)."""
    for name in (*only, *skip):
        if name not in RULES.ids():
            from lbctl.config import closest

            hint = closest(name, RULES.ids())
            raise UsageError(f"unknown doctor rule {name!r}"
                             + (f" (did you mean {hint}?)" if hint else "")
                             + f"; known: {', '.join(RULES.ids())}")
    found: list[Finding] = []
    for rule in RULES:
        if (only and rule.id not in only) or rule.id in skip:
            continue
        found += list(rule.check(ctx, rule))
    return sorted(found, key=lambda f: -f.severity.rank)  # stable: rule order kept within


def diagnose(states: Sequence[ClusterState], opts: Options, *,
             dynamic: Mapping[str, str] | None = None,
             facts: Sequence[BrokerFacts] | None = None,
             unreachable: Sequence[tuple[str, str]] = (),
             only: Sequence[str] = (), skip: Sequence[str] = (),
             files: Sequence[str] = (), flags: Sequence[str] = ()) -> Report:
    ctx, notes = context_for(states, opts, dynamic=dynamic, facts=facts, unreachable=unreachable,
                             files=files, flags=flags)
    findings = run_rules(ctx, only, skip)
    n = len(RULES) - len(set(skip)) if not only else len(set(only))
    st = ctx.state
    notes += [f"could not read {what}: {error}" for what, error in unreachable]
    return Report(st.cluster, st.source or st.cluster, str(ctx.profile.version),
                  st.load_manager, len(st.brokers), tuple(findings), n, tuple(notes))
