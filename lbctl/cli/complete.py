"""Shell completion of names: strategies, placements, and the brokers and namespaces of a snapshot
given earlier on the line.

Typer calls these (``typer.Option(autocompletion=…)``, Typer's documented hook) on each TAB with
the parameters parsed so far; the committed scripts in ``completions/`` call lbctl back. Brokers
and namespaces come from the snapshot files on the line (``[SNAPSHOT]...`` or ``--snapshot
FILE``) — never from the network: a TAB must not wait on a cluster or send credentials. Any
failure completes nothing (a half-typed line is the normal case here).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import typer


def _matching(names: Iterable[str], incomplete: str) -> list[str]:
    return sorted({n for n in names if n.startswith(incomplete)})


def strategies(incomplete: str) -> list[str]:
    """The shedding strategies lbctl models (short names)."""
    from lbctl.strategies.builtin import SHEDDING

    return _matching(SHEDDING.names(), incomplete)


def placements(incomplete: str) -> list[str]:
    """The placement strategies lbctl models (short names)."""
    from lbctl.strategies.builtin import PLACEMENT

    return _matching(PLACEMENT.names(), incomplete)


def strategy_pairs(incomplete: str) -> list[str]:
    """``compare --strategy NAME[:PLACEMENT]``: a strategy (or ``lbctl``, the planner), then
    after ``:`` a placement."""
    if ":" in incomplete:
        head, _, rest = incomplete.partition(":")
        return [f"{head}:{p}" for p in placements(rest)]
    return _matching([*strategies(""), "lbctl"], incomplete)


def _snapshot_on_line(ctx: typer.Context) -> Path | None:
    params: dict[str, Any] = dict(ctx.params or {})
    found: list[Any] = []
    for key in ("snapshots", "snapshot", "paths"):
        value = params.get(key)
        found += value if isinstance(value, list | tuple) else [value]
    found += list(getattr(ctx, "args", None) or [])  # positional files not yet bound to a name
    for v in found:
        if v is not None and not str(v).startswith("-") and Path(str(v)).is_file():
            return Path(str(v))
    return None


def _state(ctx: typer.Context) -> Any:
    path = _snapshot_on_line(ctx)
    if path is None:
        return None
    from lbctl.sources.files import snapshot_files

    try:
        return snapshot_files([path]).read().last
    except Exception:  # a TAB on a bad file completes nothing; the command will say why
        return None


def brokers(ctx: typer.Context, incomplete: str) -> list[str]:
    """The broker ids of the snapshot on the line."""
    state = _state(ctx)
    return [] if state is None else _matching(state.brokers, incomplete)


def namespaces(ctx: typer.Context, incomplete: str) -> list[str]:
    """The namespaces of the snapshot on the line (those listed and those owning bundles)."""
    from lbctl.model.bundle import namespace_of

    state = _state(ctx)
    if state is None:
        return []
    return _matching({*state.namespaces, *(namespace_of(b) for b in state.owners())},
                     incomplete)


def bundles(ctx: typer.Context, incomplete: str) -> list[str]:
    """The bundles (tenant/namespace/range) of the snapshot on the line."""
    state = _state(ctx)
    return [] if state is None else _matching(state.owners(), incomplete)
