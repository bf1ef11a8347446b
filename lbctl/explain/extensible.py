"""The reasoning behind one extensible load-manager cycle, in words and numbers.

Nothing is re-derived here: TransferShedder records each broker as phase A saw it, the hit-count
gate, every max/min round with the load average and standard deviation before and after it, each
top bundle with why it moved or not, and the gate that stopped the cycle; the split strategy
records each bundle it looked at. This module arranges those records for ``lbctl explain``.
"""

from __future__ import annotations

from dataclasses import dataclass
from shlex import quote
from typing import Any

from lbctl.explain import preamble, preamble_dict
from lbctl.explain.modular import nothing_heading
from lbctl.explain.paging import WHOLE, Pager
from lbctl.explain.placement import placement_data_lines
from lbctl.explain.words import text
from lbctl.model.cycle import ExtAction, ExtensibleCycle
from lbctl.model.decision import BundleCheck, Round, ShedResult, SplitFigures
from lbctl.strategies.split.default_namespace_bundle_split_strategy import CheckWhy
from lbctl.units import pct, rounded


def nothing_happens(c: ExtensibleCycle) -> list[str]:
    """Why the cycle moves nothing (empty when it does move something)."""
    if c.actions:
        return []
    if c.gate:
        return [c.gate]
    s = c.shed
    if s is None:
        return []
    label = f"{s.skip[0]}/{s.skip[1]}" if s.skip else "no decision"
    return [f"{label}: {text(s.why)}"]


def splits_happen(c: ExtensibleCycle) -> bool:
    """Whether the cycle splits a bundle: ``SplitScheduler`` runs on its own schedule, gated by
    ``loadBalancerEnabled`` and ``loadBalancerAutoBundleSplitEnabled`` only
    (``isLoadBalancerAutoBundleSplitEnabled``), not by the unload scheduler's gates
    (``loadBalancerSheddingEnabled``, the hit count)."""
    return any(r.decisions for r in c.splits)


def _round_dict(r: Round) -> dict[str, Any]:
    return {
        "reason": str(r.reason), "whyReason": text(r.why_reason),
        "maxBroker": r.max_broker, "minBroker": r.min_broker,
        "stdBefore": rounded(r.std_before), "stdAfter": rounded(r.std_after),
        "outcome": str(r.outcome), "why": text(r.why),
        "maxLoad": rounded(r.max_load), "minLoad": rounded(r.min_load), "offload": rounded(r.offload),
        "offloadThroughput": rounded(r.offload_throughput, 3),
        "maxThroughput": rounded(r.max_throughput, 3), "minThroughput": rounded(r.min_throughput, 3),
        "markedThroughput": rounded(r.marked, 3), "gainedThroughput": rounded(r.gained, 3),
        "adjustedOffload": rounded(r.adjusted_offload),
        "bundles": [{"bundle": b.bundle, "throughput": rounded(b.throughput, 3),
                     "outcome": str(b.outcome), "why": text(b.why),
                     "swaps": [{"bundle": u.bundle, "from": u.source, "to": u.destination}
                               for u in b.swaps]}
                    for b in r.bundles],
    }


#: a placement preview scoring more brokers than this is cut to its counts, the best brokers'
#: scores and the pick (the modular explanation's ``LIST_LIMIT``)
PREVIEW_LIMIT = 20


def _preview_dict(a: ExtAction) -> dict[str, Any]:
    """An unload's placement preview as data; over :data:`PREVIEW_LIMIT` brokers, cut to the
    counts (``candidateCount``, ``scoredCount``) and the scores of the best and the pick."""
    p = a.preview
    assert p is not None
    out: dict[str, Any] = {"bundle": a.decision.unload.bundle}
    if len(p.candidates) <= PREVIEW_LIMIT and len(p.scores) <= PREVIEW_LIMIT:
        out |= {"candidates": list(p.candidates),
                "scores": {k: rounded(v) for k, v in p.scores.items()}}
        best = list(p.best)
    else:
        best = list(p.best[:PREVIEW_LIMIT])
        shown = [b for b in dict.fromkeys((*best, p.broker)) if b is not None and b in p.scores]
        out |= {"candidateCount": len(p.candidates), "scoredCount": len(p.scores),
                "scores": {b: rounded(p.scores[b]) for b in shown}}
    out |= {"average": rounded(p.average), "best": best}
    if len(best) < len(p.best):
        out["bestCount"] = len(p.best)
    return out | {"broker": p.broker, "why": text(p.why)}


def explanation_dict(c: ExtensibleCycle, pager: Pager = WHOLE) -> dict[str, Any]:
    """The reasoning as plain data (``lbctl explain -o json``'s ``explanation``); the lists that
    grow with the cluster (brokers, rounds, decisions, splits) a page at a time (``pager``)."""
    s = c.shed
    settings = c.settings
    take = pager.take
    out: dict[str, Any] = {
        **preamble_dict(c),
        "gate": c.gate,
        "loadData": "derived from the modular load reports" if c.derived else "brokerLoadData",
        "brokers": [
            {"broker": b, "weightedMaxEMA": rounded(d.weightedMaxEMA),
             "maxResourceUsage": rounded(d.maxResourceUsage),
             "msgThroughputEMA": rounded(d.msgThroughputEMA, 3), "throughput": rounded(d.throughput, 3),
             "updatedAt": d.updatedAt, "summary": d.to_string(settings),
             "topBundles": [t.bundleName for t in c.top_bundles.get(b, ())]}
            for b, d in take("explanation.brokers", list(c.store.items()))
        ],
        "recentlyUnloaded": dict(take("explanation.recentlyUnloaded",
                                      list(c.recently_unloaded.items()))),
        "recentlyUnloadedBrokers": dict(take("explanation.recentlyUnloadedBrokers",
                                             list(c.recently_unloaded_brokers.items()))),
        "gracePeriodExpired": list(take("explanation.gracePeriodExpired", c.expired_grace)),
        "whyNothingHappens": nothing_happens(c),
    }
    if s is not None:
        out["shedding"] = {
            "outcome": ({"label": str(s.skip[0]), "reason": str(s.skip[1])} if s.skip
                        else {"label": "Success", "decisions": len(s.decisions)}),
            "why": text(s.why),
            "loadAvg": rounded(s.avg), "loadStd": rounded(s.std), "stdAfter": rounded(s.final_std),
            "targetStd": float(settings["loadBalancerBrokerLoadTargetStd"]),
            "hitCountBefore": s.hit_count_before, "hitCountAtGate": s.hit_count_at_gate,
            "hitCount": s.hit_count,
            "hitCountThreshold": s.threshold,
            "condition": dict(s.condition),
            "phaseA": [{"broker": b.broker, "load": rounded(b.load), "counted": b.counted,
                        "why": text(b.why)}
                       for b in take("explanation.shedding.phaseA", s.brokers)],
            "sortedByLoad": list(take("explanation.shedding.sortedByLoad", s.sorted_brokers)),
            "rounds": [_round_dict(r) for r in take("explanation.shedding.rounds", s.rounds)],
            "loopEnded": text(s.stop),
            "decisions": [
                {"bundle": d.unload.bundle, "from": d.unload.source, "to": d.unload.destination,
                 "label": str(d.label), "reason": str(d.reason)}
                for d in take("explanation.shedding.decisions", s.decisions)],
        }
    previewed = [a for a in c.actions if a.preview is not None]
    if previewed:
        out["placementPreview"] = [_preview_dict(a)
                                   for a in take("explanation.placementPreview", previewed)]
    brokers = list(c.state.brokers)
    checks = [(brokers[i] if i < len(brokers) else None, ch)
              for i, res in enumerate(c.splits) for ch in res.checks]
    out["splits"] = [_split_dict(broker, ch) for broker, ch in take("explanation.splits", checks)]
    return out


def _split_dict(broker: str | None, ch: BundleCheck) -> dict[str, Any]:
    """One bundle the split strategy looked at; one over a limit adds the threshold it exceeded
    (the setting, the bundle's figure in the setting's unit, the limit) and the figure against
    the limit, as the modular cycle's ``explanation.splits`` entries say it."""
    out: dict[str, Any] = {"broker": broker, "bundle": ch.bundle, "hitCount": ch.hit_count,
                           "why": text(ch.why)}
    figures = _figures(ch)
    if figures is not None:
        from lbctl.explain.words.split import split_detail, split_threshold

        setting, value = split_threshold(figures)
        out |= {"threshold": setting, "value": round(value, 6), "limit": figures.limit,
                "detail": split_detail(figures)}
    return out


def _figures(ch: BundleCheck) -> SplitFigures | None:
    why = ch.why
    return why.figures if isinstance(why, CheckWhy) else None


def _split_figure(ch: BundleCheck) -> str:
    """The figure against the limit and the setting, after a bundle over a limit ("; Message
    Rate: 49976/30000 msg/s (loadBalancerNamespaceBundleMaxMsgRate)"), as the modular cycle's
    split lines say it."""
    figures = _figures(ch)
    if figures is None:
        return ""
    from lbctl.explain.words.split import split_detail, split_threshold

    return f"; {split_detail(figures)} ({split_threshold(figures)[0]})"


@dataclass(frozen=True)
class ExtensibleExplanation:
    """An extensible cycle's reasoning, optionally narrowed to one broker or one bundle."""

    cycle: ExtensibleCycle
    broker: str | None = None
    bundle: str | None = None

    def to_dict(self, pager: Pager = WHOLE) -> dict[str, Any]:
        """The whole cycle's reasoning as data (not narrowed), long lists paged (``pager``)."""
        return explanation_dict(self.cycle, pager)

    def _mine(self, *brokers: str | None) -> bool:
        return not self.broker or self.broker in brokers

    def lines(self, pager: Pager = WHOLE) -> list[str]:
        """The cluster, the release and the decision; then (unless a gate held) each broker,
        the cluster's statistics and shedding condition, TransferShedder's rounds, the
        decisions, the bundle splits, and why nothing happens (why no bundle is unloaded, when
        the cycle splits one); a gated cycle that splits still shows its splits. Long lists a
        page at a time (``pager``)."""
        c, s = self.cycle, self.cycle.shed
        st = c.state
        out = [
            f"Cluster {st.cluster} at {st.captured_at_iso} ({len(st.brokers)} brokers, "
            f"{len(c.bundle_names())} bundles), extensible load manager"
            + (" (load data derived from the modular reports)" if c.derived else ""),
            f"Shedding strategy {c.shedding}, placement {c.placement}",
            *preamble(c, pager.full_profile),
            *placement_data_lines(st, c.settings),
        ]
        if c.gate:  # the unload scheduler's gate; SplitScheduler runs on (splits_happen)
            if not splits_happen(c):
                return [*out, "", f"Nothing happens: {c.gate}."]
            return [*out, *self._split_lines(pager), "", f"No bundle is unloaded: {c.gate}."]
        out += self._broker_lines(s, pager)
        if s is None:
            return out
        if not self.broker and s.condition:  # phase A passed: the statistics were computed
            out += self._cluster_lines(s)
        out += self._round_lines(s, pager)
        out += self._decision_lines(pager)
        out += self._split_lines(pager)
        why_not = nothing_happens(c)
        if why_not and not self.bundle:
            out += ["", nothing_heading(splits_happen(c))] + [f"  - {w}" for w in why_not]
        return out

    def _broker_lines(self, s: ShedResult | None, pager: Pager) -> list[str]:
        """Each broker in load order (those without load data last), and why phase A did not
        count it."""
        c = self.cycle
        out = ["", "Brokers (load = weightedMaxEMA: the moving average of the weighted max "
               "resource usage, max(resource% × weight) / 100):"]
        order = list(s.sorted_brokers) if s else list(c.store)
        stats = {b.broker: b for b in (s.brokers if s else ())}
        names = [b for b in order + [b for b in c.state.brokers if b not in c.store]
                 if self._mine(b)]
        for name in pager.take("explanation.brokers", names):
            d = c.store.get(name)
            if d is None:
                out.append(f"  {name}: no load data")
                continue
            res = ", ".join(f"{k} {v:.1f}%" for k, v in d.resource_percents().items())
            line = (f"  {name}: load {pct(d.weightedMaxEMA)} (current max "
                    f"{pct(d.maxResourceUsage)}; {res}); throughput "
                    f"{d.throughput / 1048576:,.2f} MB/s, EMA {d.msgThroughputEMA / 1048576:,.2f}")
            b = stats.get(name)
            if b is not None and not b.counted:
                line += f" — not counted: {text(b.why)}"
            out.append(line)
        return out

    def _cluster_lines(self, s: ShedResult) -> list[str]:
        """The load statistics and the hit-count gate."""
        target = float(self.cycle.settings["loadBalancerBrokerLoadTargetStd"])
        cond = s.condition
        return ["", "Cluster:",
                f"  load average {s.avg:.4f}, standard deviation {s.std:.4f} "
                f"(loadBalancerBrokerLoadTargetStd {target:g})",
                f"  shedding condition: std > target {cond['stdAboveTarget']}, least loaded "
                f"underloaded {cond['minUnderloaded']}, most loaded overloaded "
                f"{cond['maxOverloaded']}; hit count {s.hit_count_before} -> "
                f"{s.hit_count_at_gate} (must exceed "
                f"loadBalancerSheddingConditionHitCountThreshold {s.threshold})"]

    def _round_lines(self, s: ShedResult, pager: Pager) -> list[str]:
        """Each max/min round with its figures and top bundles, and why the loop ended."""
        rounds = [(i, r) for i, r in enumerate(s.rounds, 1)
                  if self._mine(r.max_broker, r.min_broker)]
        if not rounds:
            return []
        out = ["", "Rounds (most loaded broker paired with the least loaded):"]
        for i, r in pager.take("explanation.shedding.rounds", rounds):
            out += self._one_round(i, r)
        if not self.broker:
            out.append(f"  loop ended: {text(s.stop)}")
        return out

    def _one_round(self, i: int, r: Round) -> list[str]:
        out = [f"  {i}. {r.max_broker} -> {r.min_broker} [{r.reason}: {text(r.why_reason)}]"]
        if r.max_load is not None:
            out.append(f"     loads {r.max_load:.4f} / {r.min_load:.4f}: offload "
                       f"{r.offload:.4f} = {(r.offload_throughput or 0) / 1048576:,.2f} "
                       f"MB/s of {(r.max_throughput or 0) / 1048576:,.2f} MB/s")
        out += [f"     [{step.outcome:7}] {step.bundle} "
                f"({step.throughput / 1048576:,.2f} MB/s): {text(step.why)}"
                for step in r.bundles if not self.bundle or step.bundle == self.bundle]
        out.append(f"     {r.outcome}: {text(r.why)}; std {r.std_before:.4f} -> "
                   f"{r.std_after:.4f}")
        return out

    def _decision_lines(self, pager: Pager) -> list[str]:
        """The unloads and transfers, with the next lookup's likely pick in unload mode."""
        c = self.cycle
        acts = [a for a in c.actions
                if self._mine(a.decision.unload.source, a.decision.unload.destination)
                and (not self.bundle or a.decision.unload.bundle == self.bundle)]
        if not acts:
            return []
        out = ["", "Decisions:"]
        for a in pager.take("explanation.shedding.decisions", acts):
            u = a.decision.unload
            kind = "transfer" if u.destination else "unload"
            out.append(f"  {kind} {u.bundle}: {u.source} -> {u.destination or '(next lookup)'}"
                       f" ({a.decision.label}/{a.decision.reason})")
            if a.preview is not None:
                p = a.preview
                shown = p.scores
                if len(p.scores) > PREVIEW_LIMIT and not (self.broker or self.bundle):
                    shown = {b: p.scores[b] for b in dict.fromkeys((*p.best[:PREVIEW_LIMIT],
                                                                    p.broker))
                             if b is not None and b in p.scores}
                scores = ", ".join(f"{k}={v:.3f}" for k, v in shown.items())
                if shown is not p.scores:
                    scores = (f"{len(p.scores)} brokers scored ({scores}; `lbctl explain "
                              f"--bundle {quote(u.bundle)}`: every score)")
                out.append(f"      next lookup, {c.placement}: {scores or 'no load data'}; "
                           f"{text(a.preview.why)}; e.g. {a.preview.broker}")
        return out

    def _split_lines(self, pager: Pager) -> list[str]:
        """What the split strategy said of each bundle it looked at (shown when a bundle is
        asked about or something splits)."""
        c = self.cycle
        owners = list(c.state.brokers)
        lines = [f"  {ch.bundle} on {owners[idx]}: {text(ch.why)}{_split_figure(ch)}"
                 for idx, result in enumerate(c.splits) if self._mine(owners[idx])
                 for ch in result.checks if not self.bundle or ch.bundle == self.bundle]
        if not lines or not (self.bundle or any(r.decisions for r in c.splits)):
            return []
        return ["", "Bundle splits (DefaultNamespaceBundleSplitStrategyImpl):",
                *pager.take("explanation.splits", lines)]

    def to_text(self, pager: Pager = WHOLE) -> str:
        return "\n".join(self.lines(pager))
