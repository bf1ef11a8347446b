"""Explanations: the reasoning behind a cycle's decisions, in words (``lines``) and as data
(``to_dict``), for ``lbctl explain``.

One module per load manager (:mod:`.modular`, :mod:`.extensible`), each reading the cycle record of
:mod:`lbctl.model.cycle`; nothing here re-derives a decision or formats for a terminal.
"""

from __future__ import annotations

from typing import Any, Protocol

from lbctl.explain.outcome import cycle_decision
from lbctl.explain.paging import Pager
from lbctl.explain.profile import profile_lines
from lbctl.model.cycle import ExtensibleCycle, ModularCycle
from lbctl.model.outcome import history_lines, projection_line


class Explanation(Protocol):
    """A cycle's reasoning, optionally narrowed to one broker or one bundle (``lines``); its
    long lists a page at a time when a :class:`~lbctl.explain.paging.Pager` is given (by
    default every item)."""

    def lines(self, pager: Pager = ...) -> list[str]: ...

    def to_text(self, pager: Pager = ...) -> str: ...

    def to_dict(self, pager: Pager = ...) -> dict[str, Any]: ...


#: how an explanation's hints start: the explain command narrowed to a broker or a bundle
HINT = "lbctl explain "


def pointed(text: str, snapshots: str) -> str:
    """``text`` with each quoted hint (```lbctl explain --bundle …```) run on ``snapshots`` (the
    shell-quoted files explain was given), so that a copied hint explains the same cluster;
    unchanged when ``snapshots`` is empty (a live read, which the hint reads again)."""
    return text.replace(f"`{HINT}", f"`{HINT}{snapshots} ") if snapshots else text


def pointed_data(data: Any, snapshots: str) -> Any:
    """:func:`pointed` for the ``more`` hints of ``explain -o json``'s ``explanation``."""
    if not snapshots:
        return data
    if isinstance(data, dict):
        return {k: (HINT + snapshots + " " + v.removeprefix(HINT)
                    if k == "more" and isinstance(v, str) and v.startswith(HINT)
                    else pointed_data(v, snapshots)) for k, v in data.items()}
    if isinstance(data, list):
        return [pointed_data(v, snapshots) for v in data]
    return data


def preamble(cycle: ModularCycle | ExtensibleCycle, full_profile: bool = False) -> list[str]:
    """What every explanation says first: the cycle's decision, how the leader's clock got
    there, how long until the gate opens and the run's warnings — what the operator came for —
    then the Pulsar release modelled, cut to what bore on this cycle unless ``full_profile``
    (:mod:`lbctl.explain.profile`)."""
    dec = cycle_decision(cycle)
    out = [f"Decision: {dec.label}/{dec.reason} — {dec.detail}"]
    out += history_lines(cycle.elapsed, samples=isinstance(cycle, ModularCycle))
    out += projection_line(cycle.opens_in, cycle.projected, cycle.elapsed.interval_ms)
    out += [f"Warning: {w}" for w in cycle.warnings]
    return [*out, "", *profile_lines(cycle, full_profile)]


def preamble_dict(cycle: ModularCycle | ExtensibleCycle) -> dict[str, Any]:
    """The same as data, for ``explanation`` in ``explain -o json``."""
    d: dict[str, Any] = {
        "profile": cycle.settings.profile.name,
        "profileDifferences": [
            {"variant": v.name, "value": value, "what": v.what, "source": v.source}
            for v, value in cycle.settings.profile.differences()],
    }
    if cycle.projected:
        d["opensInCycles"] = cycle.opens_in
    return d
