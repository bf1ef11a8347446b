"""The reasoning behind one modular load-manager cycle, in words and numbers.

Nothing here re-derives a decision: strategies and the cycle record their reasons
(:class:`~lbctl.model.decision.BrokerVerdict`, ``BundleCandidate``, ``PlacementTrace``) in a
:class:`~lbctl.model.cycle.ModularCycle`, and this module arranges them for a person: each broker's resources and which one won the weighted
max, raw usage against the smoothed score, the cluster-level thresholds, every candidate bundle with
why it was chosen or skipped, each destination's placement scores, and — when nothing happens — why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from shlex import quote
from typing import Any

from msgspec import Struct

from lbctl.explain import preamble, preamble_dict
from lbctl.explain.paging import WHOLE, Pager
from lbctl.explain.placement import placement_data_lines
from lbctl.explain.words import text
from lbctl.model.bundle import format_position
from lbctl.model.cycle import ModularCycle
from lbctl.model.decision import (
    AutoSplit,
    BrokerVerdict,
    BundleCandidate,
    FilterStep,
    PlacementDecision,
    PlacementTrace,
    UnloadOutcome,
)
from lbctl.units import pct

_RESOURCES = ("cpu", "directMemory", "bandwidthIn", "bandwidthOut")

#: a whole-cycle explanation lists at most this many of a kind in full — a broker's skipped
#: bundles, a filter's removed brokers, a placement's scores — and says what changed beyond
#: that (a 200,000-bundle cycle would otherwise print hundreds of megabytes); ``--broker`` /
#: ``--bundle`` narrow the explanation and print everything
LIST_LIMIT = 20
#: a filter's reason longer than this is shortened in a whole-cycle explanation
_WHY_LIMIT = 400


def weighted_terms(cycle: ModularCycle, broker: str) -> dict[str, float]:
    """Each resource's percentage × its weight, the terms of ``getMaxResourceUsageWithWeight``."""
    local = cycle.load.brokers[broker].local
    cpu_w, dm_w, in_w, out_w = cycle.settings.weights4()
    return {
        "cpu": local.cpu.percent * cpu_w,
        "directMemory": local.directMemory.percent * dm_w,
        "bandwidthIn": local.bandwidthIn.percent * in_w,
        "bandwidthOut": local.bandwidthOut.percent * out_w,
    }


def dominant_resource(terms: Mapping[str, float]) -> str:
    """The resource that wins the weighted max (first of equals, as Java's strict ``>``)."""
    best, name = -math.inf, "cpu"
    for k in _RESOURCES:
        if terms[k] > best:
            best, name = terms[k], k
    return name


#: the gate when ``loadBalancerEnabled`` is false. ``PulsarService`` schedules the leader's
#: ``LoadSheddingTask`` (and every broker's ``LoadReportUpdaterTask``) only when it is true, and
#: ``doLoadShedding`` returns when it is false (``LoadManagerShared.isLoadSheddingEnabled``); the
#: load manager still splits (:func:`split_trigger`), so this does not say it "does nothing".
NO_SHEDDING_TASK = ("loadBalancerEnabled is false: the leader schedules no LoadSheddingTask, "
                    "so no bundle is shed")


def split_trigger(cycle: ModularCycle) -> str | None:
    """When the cycle's splits happen although ``loadBalancerEnabled`` is false, what runs them:
    ``checkNamespaceBundleSplit`` does not read that key (``ModularLoadManagerImpl``: only
    ``loadBalancerAutoBundleSplitEnabled``, leadership and more than one known broker), and
    ``updateAll`` calls it whenever an entry under ``/loadbalance/brokers`` changes
    (``handleDataNotification``) and at ``start``; but no broker writes its report periodically
    (``startLoadManagementService`` schedules ``LoadReportUpdaterTask`` only when the key is
    true), so that happens mostly as brokers start, join or leave."""
    if cycle.settings["loadBalancerEnabled"] or not splits_happen(cycle):
        return None
    return ("These splits do not wait for loadBalancerEnabled: updateAll runs "
            "checkNamespaceBundleSplit whenever an entry under /loadbalance/brokers changes. "
            "With it false no broker writes its load report periodically (no "
            "LoadReportUpdaterTask), so that happens mostly when a broker starts, joins or "
            "leaves, on the reports stored then.")


#: the simple load manager's splits' heading: each broker's own ``doNamespaceBundleSplit``,
#: run when it has written its load report, on that report's figures
#: (:mod:`lbctl.strategies.simple.split`)
_SIMPLE_SPLITS = ("Bundle splits (SimpleLoadManagerImpl.doNamespaceBundleSplit, \"Will split hot "
                  "namespace bundle\": each broker after writing its load report, on the "
                  "report's own bundle stats):")


def splits_happen(cycle: ModularCycle) -> bool:
    """Whether the cycle splits a bundle. ``checkNamespaceBundleSplit`` (``ModularLoadManagerImpl``,
    run from ``updateAll`` as load reports arrive) is gated by
    ``loadBalancerAutoBundleSplitEnabled`` and leadership only, not by the shedding gates
    (``loadBalancerSheddingEnabled``, the strategies' own): a cycle that unloads nothing may
    still split."""
    return any(s.skipped is None for s in cycle.splits)


def nothing_heading(happens: bool) -> str:
    """The heading over the reasons nothing is unloaded: "nothing happens" only when nothing at
    all does (``happens``: the cycle splits a bundle)."""
    return "Why no bundle is unloaded:" if happens else "Why nothing happens:"


def nothing_happens(cycle: ModularCycle) -> list[str]:
    """Why the cycle unloads nothing (empty when it does unload something)."""
    if cycle.unloads:
        return []
    if cycle.gate:
        return [cycle.gate]
    reasons: list[str] = []
    d = cycle.decision
    if d is not None and not d.selections:
        reasons.extend([text(n) for n in d.notes] or [f"{cycle.shedding} selected no bundle"])
    for o in cycle.outcomes:
        reasons.append(f"{o.selection.bundle} was selected but not unloaded: {text(o.skipped)}")
    return reasons


def _json_score(v: float) -> float | None:
    return None if math.isinf(v) or math.isnan(v) else round(v, 6)


#: in a cut placement, a filter that removed at most this many brokers names them; one that
#: removed more counts them (``--bundle`` names every one)
_REMOVED_LIMIT = 5


def _cut_why(why: str) -> str:
    """A long reason shortened for a whole-cycle explanation's JSON: its first clause (up to the
    first ``"; "``) — "kept brokers owning 0 bundle(s) of ns", "b has the lowest long-term
    message rate …" — or its first :data:`_WHY_LIMIT` characters; a placement's ``more`` names
    the command that writes it whole."""
    if len(why) <= _WHY_LIMIT:
        return why
    head = why.split("; ", 1)[0]
    return (head if len(head) <= _WHY_LIMIT else why[:_WHY_LIMIT]) + "; …"


def _placement_dict(t: PlacementTrace | None, full: bool = True,
                    many: bool = False) -> dict[str, Any] | None:
    """A placement as data. In a whole-cycle explanation (``full`` false) a placement with a list
    longer than :data:`LIST_LIMIT` — a filter's brokers, a strategy's candidates and scores — is
    cut, as the text is: counts (and the brokers a filter removed, when at most
    :data:`_REMOVED_LIMIT`), the best scores and the pick, reasons shortened, and ``more`` naming
    the command that writes it whole; placements with shorter lists are written whole, as
    ``--bundle`` writes every one. ``many``: the cycle places more than :data:`LIST_LIMIT`
    bundles, so every placement is cut whatever its lists (issue 30: one broker shedding 8,000
    bundles over 20 brokers wrote 65 MB — unloads × brokers)."""
    if t is None:
        return None

    def step(s: FilterStep) -> dict[str, Any]:
        if not cut:
            return {"filter": s.name, "before": list(s.before), "after": list(s.after),
                    "why": text(s.why)}
        if len(s.after) == len(s.before):  # a filter that kept everyone
            return {"filter": s.name, "beforeCount": len(s.before), "afterCount": len(s.after)}
        count = len(s.before) - len(s.after)  # a filter only removes brokers
        entry = {"filter": s.name, "beforeCount": len(s.before), "afterCount": len(s.after),
                 "removedCount": count, "why": _cut_why(text(s.why))}
        if count <= _REMOVED_LIMIT:  # named (without a set of thousands kept for each bundle)
            kept = set(s.after)
            entry["removed"] = [b for b in s.before if b not in kept]
        return entry

    def dec(d: PlacementDecision | None) -> dict[str, Any] | None:
        if d is None:
            return None
        if not cut:
            return {
                "strategy": d.strategy,
                "candidates": list(d.candidates),
                "scores": {k: _json_score(v) for k, v in d.scores.items()},
                "best": list(d.best),
                "broker": d.broker,
                "why": text(d.why),
            }
        best = list(d.best[:LIST_LIMIT])  # LeastResourceUsageWithWeight: hundreds may tie
        shown = [b for b in dict.fromkeys((*best, d.broker)) if b is not None and b in d.scores]
        entry = {
            "strategy": d.strategy,
            "candidateCount": len(d.candidates),
            "scoredCount": len(d.scores),
            "scores": {b: _json_score(d.scores[b]) for b in shown},  # the best and the pick
            "best": best,
            "broker": d.broker,
            "why": _cut_why(text(d.why)),
        }
        if len(d.best) > LIST_LIMIT:
            entry["bestCount"] = len(d.best)
        return entry

    cut = not full and (
        many or any(len(s.before) > LIST_LIMIT for s in t.steps)
        or any(d is not None and (len(d.scores) > LIST_LIMIT or len(d.candidates) > LIST_LIMIT)
               for d in (t.decision, t.recheck)))
    out = {
        "filters": [step(s) for s in t.steps],
        "decision": dec(t.decision),
        "overloadRecheck": dec(t.recheck),
        "broker": t.broker,
        # cut, the placement's reason is written when an overload re-check made it differ from
        # the strategy's (as the text does); otherwise it repeats decision.why
        "why": text(t.why) if not cut else (_cut_why(text(t.why)) if t.recheck is not None
                                             else None),
    }
    if cut:
        out["more"] = f"lbctl explain --bundle {t.bundle} -o json"
    return out


def _summarised_brokers(cands: Sequence[BundleCandidate], full: bool) -> set[str]:
    """The brokers whose skipped bundles a whole-cycle explanation counts by reason instead of
    listing: more than :data:`LIST_LIMIT` of them (none when ``full``)."""
    if full:
        return set()
    skipped: dict[str, int] = {}
    for x in cands:
        if not x.chosen:
            skipped[x.broker] = skipped.get(x.broker, 0) + 1
    return {b for b, n in skipped.items() if n > LIST_LIMIT}


def _candidates_data(cands: Sequence[BundleCandidate], full: bool, pager: Pager = WHOLE
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The candidates as data and, in a whole-cycle explanation, the skipped bundles of a broker
    with more than :data:`LIST_LIMIT` of them counted by reason instead (chosen ones are always
    listed, in order) — the text explanation's rule. The listed ones are paged (``pager``)."""
    summarised = _summarised_brokers(cands, full)
    listed: list[BundleCandidate] = []
    counted: dict[tuple[str, str], int] = {}
    for x in cands:
        if x.chosen or x.broker not in summarised:
            listed.append(x)
        else:
            why = text(x.why)
            counted[(x.broker, why)] = counted.get((x.broker, why), 0) + 1
    summary = [{"broker": b, "why": why, "count": n,
                "more": f"lbctl explain --broker {b} -o json: each of them"}
               for (b, why), n in counted.items()]
    return ([{"broker": x.broker, "bundle": x.bundle, "value": x.value, "chosen": x.chosen,
              "why": text(x.why)} for x in pager.take("explanation.candidates", listed)],
            list(pager.take("explanation.skippedCandidates", summary)))


def _narrowed(cycle: ModularCycle, broker: str | None, bundle: str | None
              ) -> tuple[list[BundleCandidate], list[UnloadOutcome]]:
    """The candidates and the unloads of ``broker`` or ``bundle`` (every one when neither)."""
    d = cycle.decision
    cands = [x for x in (d.candidates if d else ())
             if (not broker or x.broker == broker) and (not bundle or x.bundle == bundle)]
    outcomes = [o for o in cycle.outcomes
                if (not broker or o.selection.broker == broker)
                and (not bundle or o.selection.bundle == bundle)]
    return cands, outcomes


def _narrowed_splits(cycle: ModularCycle, broker: str | None, bundle: str | None
                     ) -> list[AutoSplit]:
    """The cycle's automatic splits (``checkNamespaceBundleSplit``) of ``broker``, or of
    ``bundle`` — the parent or one of its children (every one when neither)."""
    return [s for s in cycle.splits
            if (not broker or s.candidate.broker == broker)
            and (not bundle or s.candidate.bundle == bundle or bundle in s.children)]


def _split_dict(s: AutoSplit) -> dict[str, Any]:
    """A split as data: the bundle, the threshold it exceeded (the setting, the bundle's figure
    in the setting's unit, the limit), the algorithm, and what came of it — the plan's split
    action says the same, this adds the setting and the figure."""
    from lbctl.explain.words.split import split_detail, split_threshold

    c = s.candidate
    setting, value = split_threshold(c)
    return {"bundle": c.bundle, "broker": c.broker, "reason": str(c.reason),
            "threshold": setting, "value": round(value, 6), "limit": c.limit,
            "detail": split_detail(c), "algorithm": s.algorithm,
            "boundaries": [format_position(b) for b in s.boundaries],
            "children": list(s.children), "unload": s.unload,
            "skipped": None if s.skipped is None else text(s.skipped),
            "why": None if s.why is None else (text(s.why) or None)}


def _outcome_dict(o: UnloadOutcome, full: bool, many: bool = False) -> dict[str, Any]:
    return {"bundle": o.selection.bundle, "broker": o.selection.broker,
            "destinationBroker": o.destination,
            "skipped": None if o.skipped is None else text(o.skipped),
            "placement": _placement_dict(o.placement, full, many)}


def explanation_dict(cycle: ModularCycle, broker: str | None = None,
                     bundle: str | None = None, pager: Pager = WHOLE) -> dict[str, Any]:
    """The reasoning as plain data, attached to the plan by ``lbctl explain -o json``.

    Narrowed to ``broker`` or ``bundle`` (``--broker``/``--bundle``), the candidates and unloads
    are that broker's or bundle's, every list whole. The whole cycle's explanation writes lists
    of up to :data:`LIST_LIMIT` whole and summarises longer ones (``skippedCandidates``, filter
    counts with the removed names, the best scores), so that a 200,000-bundle cycle's
    explanation stays a few megabytes rather than a gigabyte. Lists that grow with the cycle
    (candidates, unloads, the leader's recently unloaded bundles) are written a page at a time
    (``pager``, :mod:`lbctl.explain.paging`), narrowed or not."""
    d = cycle.decision
    full = bool(broker or bundle)
    cands, outcomes = _narrowed(cycle, broker, bundle)
    listed, skipped = _candidates_data(cands, full, pager)
    many = len(outcomes) > LIST_LIMIT  # more placements than a list written whole
    out = {
        **preamble_dict(cycle),
        "gate": cycle.gate,
        "notes": [text(n) for n in d.notes] if d else [],
        "numbers": dict(d.numbers.items()) if d else {},
        "recentlyUnloaded": dict(pager.take("explanation.recentlyUnloaded",
                                            list(cycle.load.recently_unloaded.items()))),
        "gracePeriodExpired": list(pager.take("explanation.gracePeriodExpired",
                                              cycle.expired_grace)),
        "candidates": listed,
        "outcomes": [_outcome_dict(o, full, many)
                     for o in pager.take("explanation.outcomes", outcomes)],
        "splits": [_split_dict(s) for s in pager.take(
            "explanation.splits", _narrowed_splits(cycle, broker, bundle))],
        "whyNothingHappens": nothing_happens(cycle),
    }
    if skipped:
        out["skippedCandidates"] = skipped
    trigger = split_trigger(cycle)
    if trigger:  # only with loadBalancerEnabled=false and splits: what runs them then
        out["splitTrigger"] = trigger
    if full:
        out["narrowedTo"] = {"broker": broker, "bundle": bundle}
    return out


class ModularExplanation(Struct, frozen=True):
    """A modular cycle's reasoning, optionally narrowed to one broker or one bundle."""

    cycle: ModularCycle
    broker: str | None = None
    bundle: str | None = None

    def to_dict(self, pager: Pager = WHOLE) -> dict[str, Any]:
        """The reasoning as data, narrowed as the text is (see :func:`explanation_dict`)."""
        return explanation_dict(self.cycle, self.broker, self.bundle, pager)

    def lines(self, pager: Pager = WHOLE) -> list[str]:
        """The cluster, the release and the decision; then (unless a gate held) each broker,
        the cluster notes, the candidate bundles, the unloads with their placements, the
        bundle asked about, and why nothing happens (why no bundle is unloaded, when the cycle
        splits one); a gated cycle that splits still shows its splits. Long lists a page at a
        time (``pager``)."""
        c = self.cycle
        st = c.state
        out = [
            f"Cluster {st.cluster} at {st.captured_at_iso} ({len(st.brokers)} brokers, "
            f"{st.bundle_count()} bundles)",
            f"Shedding strategy {c.shedding}, placement {c.placement}",
            *preamble(c, pager.full_profile),
            *placement_data_lines(st, c.settings),
        ]
        if c.gate:  # the shedding gate; the cycle's splits are its own (splits_happen)
            if not splits_happen(c):
                return [*out, "", f"Nothing happens: {c.gate}."]
            trigger = split_trigger(c)
            return [*out, *self._split_lines(pager), *(["", trigger] if trigger else []), "",
                    f"No bundle is unloaded: {c.gate}."]
        out += self._broker_lines(pager)
        d = c.decision
        if d and d.notes and not self.broker:
            out += ["", "Cluster:"] + [f"  {text(n)}" for n in d.notes]
        out += self._split_lines(pager)
        out += self._decided_lines(pager)
        if self.bundle:
            out += self._bundle_lines()
        why_not = nothing_happens(c)
        if why_not and not self.bundle:
            out += ["", nothing_heading(splits_happen(c))] + [f"  - {w}" for w in why_not]
        return out

    def _broker_lines(self, pager: Pager) -> list[str]:
        """Each broker's usage, the resource that won the weighted max, and its verdict."""
        c = self.cycle
        out = ["", "Brokers (weighted max resource usage = max(resource% × weight) / 100):"]
        verdicts = c.decision.brokers if c.decision else {}
        names = [b for b in c.state.brokers if not self.broker or b == self.broker]
        for name in pager.take("brokers", names):
            dom = dominant_resource(weighted_terms(c, name))
            local = c.load.brokers[name].local
            res = ", ".join(f"{k} {local.resource_percents()[k]:.1f}%" for k in _RESOURCES)
            v = verdicts.get(name)
            line = f"  {name}: usage {pct(c.settings.weighted_usage(local))} (won by {dom}; {res})"
            if v is not None and v.score is not None:
                line += f"; smoothed score {pct(v.score)}"
            out.append(line)
            if v is not None:
                out.append(_verdict_line(v))
        return out

    def _split_lines(self, pager: Pager) -> list[str]:
        """The bundles the cycle splits (``BundleSplitterTask`` picks them, then
        ``checkNamespaceBundleSplit`` splits each before shedding: why candidates say "split in
        this cycle"), with the threshold each exceeded and the algorithm's boundaries."""
        from lbctl.explain.words.split import split_detail, split_threshold

        splits = _narrowed_splits(self.cycle, self.broker, self.bundle)
        if not splits:
            return []
        out = ["", _SIMPLE_SPLITS if self.cycle.shedding == "SimpleLoadManagerImpl" else
               "Bundle splits (BundleSplitterTask, checkNamespaceBundleSplit; before "
               "shedding):"]
        for s in pager.take("explanation.splits", splits):
            c = s.candidate
            setting, _ = split_threshold(c)
            head = f"  {c.bundle} on {c.broker}: {split_detail(c)} ({setting})"
            if s.skipped is not None:
                out.append(f"{head} — not split: {text(s.skipped)}")
                continue
            at = ", ".join(format_position(b) for b in s.boundaries)
            kids = ", ".join(k.rsplit("/", 1)[-1] for k in s.children)
            out.append(f"{head}; {s.algorithm} at {at} -> {kids}"
                       + ("; the children are unloaded" if s.unload else
                          "; its owner keeps the children"))
        return out

    def _decided_lines(self, pager: Pager) -> list[str]:
        """The candidate bundles in the order the strategy looked at them, then the unloads
        and their placements."""
        cands, outcomes = _narrowed(self.cycle, self.broker, self.bundle)
        full = bool(self.broker or self.bundle)
        out: list[str] = []
        if cands:
            out += ["", "Candidate bundles, in the order the strategy looked at them:"]
            out += _candidate_lines(cands, full, pager)
        if outcomes:
            out += ["", "Unloads:"]
            for o in pager.take("explanation.outcomes", outcomes):
                s = o.selection
                head = f"  {s.bundle}: {s.broker} -> {o.destination or '(none)'} ({s.reason})"
                out.append(head + (f" — skipped: {text(o.skipped)}" if o.skipped else ""))
                out.extend(_placement_lines(o.placement, full))
        return out

    def _bundle_lines(self) -> list[str]:
        c, b = self.cycle, self.bundle or ""
        owners = c.state.owners()
        lines = ["", f"Bundle {b}:"]
        if b not in owners:
            lines.append("  not owned by any broker in this snapshot")
            return lines
        lines.append(f"  owned by {owners[b]}")
        data = c.load.bundle_data.get(b)
        if data is not None:
            lines.append(
                f"  short-term {data.shortTermData.msg_rate:,.1f} msg/s, "
                f"{data.shortTermData.throughput / 1048576:,.2f} MB/s; long-term "
                f"{data.longTermData.msg_rate:,.1f} msg/s ({data.shortTermData.numSamples} short, "
                f"{data.longTermData.numSamples} long samples)")
        ts = c.load.recently_unloaded.get(b)
        if ts is not None:
            grace = int(c.settings["loadBalancerSheddingGracePeriodMinutes"])
            age = (c.state.captured_at - ts) / 60000
            lines.append(f"  recently unloaded {age:.1f} min ago: within the {grace}-minute grace "
                         "period (loadBalancerSheddingGracePeriodMinutes), invisible to shedders")
        d = c.decision
        looked = [x for x in (d.candidates if d else ()) if x.bundle == b]
        chosen = [s for s in (d.selections if d else ()) if s.bundle == b]
        if not looked and not chosen:
            lines.append("  the shedding strategy did not consider it (its broker was not shed)")
        return lines

    def to_text(self, pager: Pager = WHOLE) -> str:
        return "\n".join(self.lines(pager))


def _verdict_line(v: BrokerVerdict) -> str:
    tag = f"{v.label}/{v.reason}" if v.label else "no action"
    why = text(v.why)
    return f"      -> {tag}" + (f": {why}" if why else "")


def _candidate_lines(cands: Sequence[BundleCandidate], full: bool,
                     pager: Pager = WHOLE) -> list[str]:
    """Each candidate on a line; in a whole-cycle explanation, a broker with more than
    :data:`LIST_LIMIT` skipped bundles has them counted by reason instead (chosen ones are always
    listed, in order). The listed ones are paged (``pager``), as in the JSON."""
    summarised = _summarised_brokers(cands, full)
    listed = [x for x in cands if x.chosen or x.broker not in summarised]
    page = pager.take("explanation.candidates", listed)
    shown = None if len(page) == len(listed) else {id(x) for x in page}
    out: list[str] = []
    grouped: dict[str, dict[str, int]] = {}
    for x in cands:
        if x.chosen or x.broker not in summarised:
            if shown is not None and id(x) not in shown:
                continue
            why = text(x.why)
            mark = "chosen " if x.chosen else "skipped"
            out.append(f"  [{mark}] {x.bundle} on {x.broker}: {why}")
            continue
        why = text(x.why)
        reasons = grouped.get(x.broker)
        if reasons is None:  # the broker's first skipped bundle: its summary goes here
            reasons = grouped[x.broker] = {}
            out.append(x.broker)  # placeholder, replaced below
        reasons[why] = reasons.get(why, 0) + 1
    done = []
    for line in out:
        reasons = grouped.get(line)
        if reasons is None:
            done.append(line)
            continue
        done += [f"  [skipped] {n} bundle(s) on {line}: {why}" for why, n in reasons.items()]
        done.append(f"      (`lbctl explain --broker {quote(line)}` lists each of them)")
    return done


def _scores_text(scores: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={'inf' if math.isinf(v) else f'{v:,.3f}'}" for k, v in scores.items())


def _placement_lines(t: PlacementTrace | None, full: bool = True) -> list[str]:
    if t is None:
        return []
    out = []
    for s in t.steps:
        step_why = text(s.why)
        if not step_why:
            continue
        if full or len(step_why) <= _WHY_LIMIT:
            out.append(f"      filter {s.name}: {step_why}")
            continue
        head = step_why[:_WHY_LIMIT].rsplit(", ", 1)[0]
        out.append(f"      filter {s.name}: {len(s.before)} -> {len(s.after)} broker(s): "
                   f"{head}, … (`lbctl explain --bundle {quote(t.bundle)}`: every name)")
    for label, dec in (("placement", t.decision), ("overload re-check", t.recheck)):
        if dec is None:
            continue
        best = dec.best if full or len(dec.best) <= LIST_LIMIT else dec.best[:LIST_LIMIT]
        if full or len(dec.scores) <= LIST_LIMIT:
            scores = _scores_text(dec.scores)
        else:  # the best brokers' scores and the chosen one's
            shown = {b: dec.scores[b] for b in (*best, dec.broker)
                     if b is not None and b in dec.scores}
            scores = (f"{len(dec.scores)} brokers scored ({_scores_text(shown)}; `lbctl explain "
                      f"--bundle {quote(t.bundle)}`: every score)")
        more = f" and {len(dec.best) - len(best)} more" if len(best) < len(dec.best) else ""
        out.append(f"      {label} {dec.strategy}: {scores or 'no scores'}"
                   + (f"; best {', '.join(best)}{more}" if dec.best else ""))
        why = text(dec.why)
        if why:
            if not full and len(why) > _WHY_LIMIT:
                why = (why[:_WHY_LIMIT].rsplit("; ", 1)[0] + f"; … (`lbctl explain --bundle "
                       f"{quote(t.bundle)}`: the whole reason)")
            out.append(f"        {why}")
    if t.why and t.recheck is not None:
        out.append(f"      {text(t.why)}")
    return out
