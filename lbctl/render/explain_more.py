"""What ``lbctl explain`` adds after Pulsar's reasoning: the next questions an operator asks.

* ``--bundle``: the bundle's **top topics by traffic** — a hot bundle is hot because of a few
  topics, and whether one topic dominates decides the fix (split the bundle, or partition the
  topic). The figures are the topic stats the state carries: live, the brokers'
  ``/admin/v2/broker-stats/topics`` (what ``lbctl snapshot export`` also stores); a snapshot
  without them says so. A topic belongs to the bundle whose range holds its hash
  (:meth:`lbctl.model.cluster.ClusterState.topics_of_bundle`, ``NamespaceBundleFactory``'s rule).
* ``--all-cycles``: a **summary across cycles** — each cycle's moves, the usage spread (std of the
  brokers' usage) before it, the spread its plan estimates after it, and the spread the next
  snapshot actually shows; a cycle whose plan widens the spread, or after whose moves the next
  snapshot is more spread, is flagged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lbctl.loadmanager.base import CycleResult
from lbctl.model.cluster import ClusterState
from lbctl.render import table
from lbctl.render.tables import wrap_prose
from lbctl.units import mb, pct, rate

#: topics listed under a bundle
TOP = 10
#: a spread counts as worse beyond this (fraction of usage: 0.1 point)
_WORSE = 0.001


def top_topics(state: ClusterState, bundle: str, n: int = TOP
               ) -> tuple[list[dict[str, Any]], int] | None:
    """The bundle's topics with stats, by throughput (in + out) then message rate, at most ``n``,
    and how many it has; ``None`` when the state carries no topic stats at all."""
    if not state.topics:
        return None
    rows: list[dict[str, Any]] = []
    total = 0.0
    for t in state.topics_of_bundle(bundle):
        st = state.topics.get(t)
        if st is None:
            continue
        tp = st.msgThroughputIn + st.msgThroughputOut
        total += tp
        rows.append({"topic": t, "msgRate": st.msgRateIn + st.msgRateOut, "throughput": tp,
                     "producers": st.producerCount, "consumers": st.consumerCount})
    rows.sort(key=lambda r: (-r["throughput"], -r["msgRate"], r["topic"]))
    for r in rows:
        r["share"] = r["throughput"] / total if total > 0 else None
    return rows[:n], len(rows)


def top_topics_data(state: ClusterState, bundle: str) -> dict[str, Any]:
    """``-o json``'s ``topTopics``: the list (empty without stats) and whether stats exist."""
    got = top_topics(state, bundle)
    if got is None:
        return {"bundle": bundle, "topicStats": False, "topics": [], "count": 0}
    return {"bundle": bundle, "topicStats": True, "topics": got[0], "count": got[1]}


def top_topics_text(state: ClusterState, bundle: str) -> str:
    got = top_topics(state, bundle)
    head = f"Top topics of {bundle} by traffic"
    if got is None:
        return wrap_prose(f"{head}: the state has no topic stats (live: the brokers' "
                          "/admin/v2/broker-stats/topics; a snapshot from lbctl snapshot export "
                          "has them)")
    shown, count = got
    if not shown:
        return wrap_prose(f"{head}: no topic with stats hashes into it")
    lines = [wrap_prose(f"{head} (in + out, from the topic stats):"), table([
        {"topic": r["topic"], "msg/s": rate(r["msgRate"]), "MB/s": mb(r["throughput"]),
         "share": "-" if r["share"] is None else pct(r["share"]),
         "prod/cons": f"{r['producers']}/{r['consumers']}"} for r in shown])]
    if count > len(shown):
        lines.append(f"… and {count - len(shown)} more topic(s)")
    return "\n".join(lines)


def _std(values: Sequence[float]) -> float:
    vals = [v for v in values if math.isfinite(v)]
    if not vals:
        return math.nan
    m = sum(vals) / len(vals)
    return math.sqrt(sum((v - m) ** 2 for v in vals) / len(vals))


def cycles_summary(results: Sequence[CycleResult]) -> list[dict[str, Any]]:
    """Per cycle: moves, the spread before, its plan's estimate after, the next snapshot's spread,
    and why it is flagged (empty when it is not)."""
    plans = [r.plan() for r in results]
    before = [_std([b.usage for b in p.brokers]) for p in plans]
    out = []
    for i, p in enumerate(plans):
        moves = sum(1 for a in p.actions if a.skipped is None and a.action != "split")
        after = _std([b.usage_after for b in p.brokers])
        nxt = before[i + 1] if i + 1 < len(plans) else None
        flags = []
        if moves and after > before[i] + _WORSE:
            flags.append("its plan widens the spread")
        if moves and nxt is not None and nxt > before[i] + _WORSE:
            flags.append("the next snapshot is more spread")
        out.append({"cycle": i + 1, "capturedAt": p.captured_at, "moves": moves,
                    "stdBefore": before[i], "stdAfterEstimate": after, "stdNext": nxt,
                    "worse": "; ".join(flags) or None})
    return out


def cycles_summary_text(results: Sequence[CycleResult]) -> str:
    rows = cycles_summary(results)
    worse = [r for r in rows if r["worse"]]
    table_rows = [{"cycle": str(r["cycle"]), "captured": r["capturedAt"][11:19] or r["capturedAt"],
                   "moves": str(r["moves"]), "spread": pct(r["stdBefore"]),
                   "plan's est.": pct(r["stdAfterEstimate"]),
                   "next": "-" if r["stdNext"] is None else pct(r["stdNext"]),
                   "flag": "WORSE" if r["worse"] else ""} for r in rows]
    lines = [f"=== Summary across {len(rows)} cycles ===",
             wrap_prose("spread = std of the brokers' usage; plan's est. = after the cycle's "
                        "moves, as lbctl estimates them; next = what the next snapshot shows"),
             table(table_rows)]
    if worse:
        lines += [wrap_prose(f"  ! cycle {r['cycle']} made the spread worse: {r['worse']}")
                  for r in worse]
    else:
        lines.append("No cycle with moves made the spread worse.")
    return "\n".join(lines)
