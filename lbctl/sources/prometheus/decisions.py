"""The leader's decisions between two steps: counter increases (resets honoured) and
ownership changes."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

from lbctl.sources.prometheus.catalog import broker_id


def owners_of(brokers: Mapping[str, Any]) -> dict[str, str]:
    return {name: b for b, rep in brokers.items() for name in rep["lastStats"]}


def add_moves(snap: dict[str, Any], next_owner: Mapping[str, str],
              now_owner: Mapping[str, str] | None = None) -> None:
    """The ownership changes and splits between ``snap`` and the next snapshot (its bundles'
    owners, ``next_owner``), added to ``snap``'s observed decisions — both sides with their
    owners settled the same way (see :meth:`PrometheusHistory._pick`). ``now_owner``:
    ``owners_of(snap["brokers"])`` when the caller has it already (a history computes each
    snapshot's owners once, as the next owners of the snapshot before it)."""
    observed = snap.get("observed")
    if observed is None:
        return
    if now_owner is None:
        now_owner = owners_of(snap["brokers"])
    # the few bundles that moved, found first (pairs of owners that differ, in C), then sorted
    # (by name, as the list is written); a bundle gone is not a move
    moved = sorted(name for name, _ in now_owner.items() - next_owner.items()
                   if name in next_owner)
    moves = [{"bundle": name, "from": now_owner[name], "to": next_owner[name]} for name in moved]
    splits = splits_between(now_owner.keys(), next_owner.keys())
    if moves:
        observed["moves"] = moves
    if splits:
        observed["splits"] = splits


def increase(before: Mapping[Any, float], after: Mapping[Any, float], notes: list[str],
              what: str) -> tuple[float, set[str]]:
    """Sum over series of each counter's increase, a decrease being a restart from zero; the
    brokers (scrape targets) whose counter moved."""
    total = 0.0
    who: set[str] = set()
    for key in set(before) | set(after):
        if key not in after or key not in before:
            # as PromQL's increase(): a series needs a sample at both ends; a leader's first
            # decisions (the modular load manager exports its counters from its first cycle on)
            # or a missed scrape leave this interval uncounted for that broker: said so
            notes.append(f"{what}: the counter of {broker_id(dict(key))} has no sample at "
                         f"{'the start' if key not in before else 'the end'} of the interval; "
                         "its decisions there are not counted")
            continue
        a = after[key]
        if a >= before[key]:
            inc = a - before[key]
        else:
            inc = a
            notes.append(f"{what}: a counter restarted (broker restart)")
        if inc:
            total += inc
            labels = dict(key)
            who.add(broker_id(labels))
    return total, who


def splits_between(now: AbstractSet[str], nxt: AbstractSet[str]) -> list[str]:
    from lbctl.model.bundle import BundleName, BundleNameError

    gone = sorted(now - nxt)
    if not gone:
        return []
    new: dict[str, list[Any]] = {}
    for n in nxt - now:
        try:
            bn = BundleName.parse(n)
        except BundleNameError:
            continue
        new.setdefault(bn.namespace, []).append(bn.range)
    out = []
    for g in gone:
        try:
            bn = BundleName.parse(g)
        except BundleNameError:
            continue
        r = bn.range
        if any(r.lower <= c.lower and c.upper <= r.upper and c != r
               for c in new.get(bn.namespace, [])):
            out.append(g)
    return out
