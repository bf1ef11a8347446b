"""Views of simulations (``lbctl simulate``) and comparisons (``lbctl compare``).

JSON/YAML: ``lbctl/simulation@1`` — the run's parameters, the load model's calibration, a summary
and every cycle (spread, moves, per-broker load as decided on and as reported, and what lbctl's
planner predicted); ``compare`` prints ``lbctl/comparison@1``, one summary per run. A run's
``predictionError`` is its predicted usage after against the truth's (``null``: the strategy
predicts nothing — Pulsar's do not — which is not an error of zero). CSV/JSONL: one row per cycle and broker, the cycle's
figures repeated on each (fixed columns, whatever the brokers); one row per run for ``compare``.
Table: the cycles (quiet ones elided in long runs) and the summary in words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.model.cluster import iso_time
from lbctl.render import table
from lbctl.render.display import current
from lbctl.render.names import BrokerNames
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.safe.text import name_safe
from lbctl.simulate.compare import ComparisonResult
from lbctl.simulate.engine import CycleRecord, SimulationResult
from lbctl.simulate.hosts import host_figures
from lbctl.units import mb, pct, rounded

SIMULATION_FORMAT = "lbctl/simulation@1"
COMPARISON_FORMAT = "lbctl/comparison@1"
_FULL_TABLE = 60  # longer runs show only the cycles where something moved

SIMULATION_SCHEMA = Schema("simulate", "cycle and broker (the cycle's figures repeated)", (
    col("cycle", "integer", "the cycle, from 1"),
    col("at", "time", "when the cycle runs (simulated time)"),
    col("minute", "integer", "minutes since the first cycle"),
    col("broker", "string", "the broker"),
    col("load", "number", "its true (modelled) weighted max usage when the cycle decides, fraction"),
    col("reported", "number", "the usage its last written report says, fraction"),
    col("predicted", "number", "lbctl's figure: its usage after the cycle's moves as the plan "
        "predicted it, fraction (empty: no prediction; Pulsar's strategies make none)"),
    col("predictionError", "number", "predicted minus its true load once the moves are made (at "
        "the next cycle, or the end of the run), fraction"),
    col("score", "number", "the strategy's smoothed score, fraction (empty when it keeps none)"),
    col("bundles", "integer", "bundles it carries"),
    col("throughput", "number", "its throughput in + out, bytes/s"),
    col("msgRate", "number", "its message rate in + out, msg/s"),
    col("mean", "number", "cycle: mean load over the brokers, fraction"),
    col("std", "number", "cycle: population standard deviation of the load, fraction"),
    col("cov", "number", "cycle: coefficient of variation (std / mean)"),
    col("min", "number", "cycle: lowest load, fraction"),
    col("max", "number", "cycle: highest load, fraction"),
    col("range", "number", "cycle: max - min, fraction"),
    col("nonFinite", "integer", "cycle: brokers whose load is infinite or NaN (left out of the "
        "spread; empty when none)"),
    col("unloads", "integer", "cycle: unloads carried out"),
    col("skipped", "integer", "cycle: unloads the strategy chose but the cycle skipped"),
    col("throughputMoved", "number", "cycle: throughput of the moved bundles, bytes/s"),
    col("msgRateMoved", "number", "cycle: message rate of the moved bundles, msg/s"),
    col("bounceBacks", "integer", "cycle: moves back to a broker the bundle left recently"),
    col("aboveAveragePlacements", "integer", "cycle: moves onto a broker above the mean load"),
    col("reportsWritten", "integer", "cycle: brokers that rewrote their load report"),
))

COMPARISON_SCHEMA = Schema("compare", "strategy run", (
    col("shedding", "string", "the shedding strategy"),
    col("placement", "string", "the placement strategy"),
    col("cycles", "integer", "cycles simulated"),
    col("finalStd", "number", "standard deviation of the load after the last cycle, fraction"),
    col("finalRange", "number", "max - min load after the last cycle, fraction"),
    col("finalCov", "number", "coefficient of variation after the last cycle"),
    col("unloads", "integer", "unloads over the run"),
    col("bundlesMoved", "integer", "distinct bundles moved"),
    col("throughputMoved", "number", "throughput moved over the run, bytes/s summed per move"),
    col("bounceBacks", "integer", "moves back to a broker the bundle left recently"),
    col("aboveAveragePlacements", "integer", "moves onto a broker above the mean load"),
    col("settledAtCycle", "integer", "first cycle from which the range stays in the band (empty: never)"),
    col("settleMinutes", "number", "minutes until then (empty: never)"),
    col("prediction", "string", "what predicted the usage after the plans: lbctl's load model, "
        "or none (Pulsar's strategies predict nothing; the error columns are then empty)"),
    col("predictionP50", "number", "median absolute error of the predicted usage after against "
        "the truth, over brokers and plans, fraction"),
    col("predictionP95", "number", "95th percentile of that error, fraction"),
    col("predictionMax", "number", "largest such error, fraction"),
    col("predictionWorstBroker", "string", "the broker of the largest error"),
))

#: what predicts usage after in a run that does (lbctl's planner), as outputs name it
PREDICTOR = "lbctl's load model"


def _errors(r: SimulationResult, c: CycleRecord) -> dict[str, float]:
    """Per broker: cycle ``c``'s predicted usage after minus the truth's (none: no prediction)."""
    if c.predicted is None:
        return {}
    truth = r.truth_after(c.cycle)
    return {b: p - truth[b] for b, p in c.predicted.items() if b in truth}


def _cycle_dict(r: SimulationResult, c: CycleRecord) -> dict[str, Any]:
    pred = c.predicted or {}
    errors = _errors(r, c)
    return {
        "cycle": c.cycle,
        "at": iso_time(c.at),
        "spread": {k: rounded(v) for k, v in c.spread.to_dict().items()},
        "unloads": len(c.moves),
        "skipped": c.skipped,
        "throughputMoved": c.moved_throughput,
        "msgRateMoved": c.moved_msg_rate,
        "bounceBacks": sum(m.bounce_back for m in c.moves),
        "aboveAveragePlacements": sum(m.above_average for m in c.moves),
        "reportsWritten": c.reports_written,
        "gate": c.gate,
        "brokers": [
            {"broker": b, "load": rounded(load), "reported": rounded(c.reported.get(b)),
             "score": rounded(c.scores.get(b)), "bundles": c.bundles.get(b, 0),
             "throughput": c.throughput.get(b, 0.0), "msgRate": c.msg_rate.get(b, 0.0),
             "predicted": rounded(pred.get(b)), "predictionError": rounded(errors.get(b))}
            for b, load in c.loads.items()
        ],
        "moves": [
            {"bundle": m.bundle, "from": m.source, "to": m.destination, "reason": m.reason,
             "throughput": m.throughput, "msgRate": m.msg_rate, "bounceBack": m.bounce_back,
             "aboveAverage": m.above_average}
            for m in c.moves
        ],
        # only where the strategy threw: a run without such a cycle reads as it always did
        **({"failure": c.failure} if c.failure else {}),
    }


def _summary(r: SimulationResult) -> dict[str, Any]:
    s = r.summary()
    for key in ("initial", "final"):
        s[key] = {k: rounded(v) for k, v in s[key].items()}
    s["finalThroughputRatio"] = rounded(s["finalThroughputRatio"])
    p = s["predictionError"]
    if p is not None:
        s["predictionError"] = {"by": PREDICTOR, "against": "the truth's load once the moves are "
                                "made (next cycle, or the end of the run)",
                                **{k: rounded(v) if isinstance(v, float) else v
                                   for k, v in p.items()}}
    return s


def _profile_name(version: Mapping[str, Any]) -> str:
    """``Profile.name`` from its ``to_dict()``: ``Pulsar 4.0.4 (snapshot)``."""
    return f"Pulsar {version['version']} ({version['origin']})"


def _header(r: SimulationResult) -> dict[str, Any]:
    return {
        "cluster": r.cluster,
        "startedAt": iso_time(r.start),
        "shedding": r.shedding,
        "placement": r.placement,
        "intervalMinutes": r.interval_minutes,
        "traceSnapshots": r.trace_snapshots,
        "band": r.band,
        "bounceWindowMinutes": r.bounce_window_ms / 60_000,
        "hosts": r.hosts,
        # the truth per broker, in a hosts file's keys (--hosts FILE reads it back)
        "truthHosts": {b: {k: v if isinstance(v, int) else rounded(v)
                           for k, v in host_figures(h).items()}
                       for b, h in r.truth_hosts.items()},
    }


def _points(x: float | None) -> str:
    return "-" if x is None else f"{x * 100:.1f}"


def prediction_figures(r: SimulationResult, name: Callable[[str], str] = str) -> str:
    """The run's prediction error in words; a strategy that predicts nothing says so."""
    p = r.prediction()
    if p is None:
        return "predicts no usage after (no prediction error)"
    worst = p.worst()
    if worst is None:
        return "no plan moved a bundle: nothing predicted"
    cycle, broker, signed = worst
    where = ("every figure as predicted, to a twentieth of a point" if abs(signed) < 0.0005
             else f"{name(broker)}, cycle {cycle}, predicted "
                  f"{'above' if signed > 0 else 'below'} the truth")
    return (f"{p.plans} plan(s), {len(p.errors)} broker figure(s); absolute error p50 "
            f"{_points(p.percentile(0.5))}, p95 {_points(p.percentile(0.95))}, max "
            f"{_points(abs(signed))} points ({where})")


_PREDICTED = (f"Usage after as {PREDICTOR} predicted it, against the truth once the moves are "
              "made")


def summary_words(r: SimulationResult) -> str:
    s = r.summary()
    settled = s["settledAtCycle"]
    when = (f"settled within a {r.band * 100:g}-point range from cycle {settled} "
            f"({s['settleMinutes']} min)" if settled is not None
            else f"did not settle within a {r.band * 100:g}-point range")
    return (
        f"{s['unloads']} unload(s) of {s['bundlesMoved']} bundle(s) in {s['cyclesWithUnloads']} "
        f"cycle(s), {mb(s['throughputMoved'], 1)} MB/s moved, {s['bounceBacks']} bounce-back(s), "
        f"{s['aboveAveragePlacements']} placement(s) onto above-average brokers; load range "
        f"{pct(s['initial']['range'])} -> {pct(s['final']['range'])}, std "
        f"{pct(s['initial']['std'])} -> {pct(s['final']['std'])}; {when}."
    )


def failure_words(r: SimulationResult) -> str:
    """One sentence on the cycles whose shedding strategy threw ("" when none did): their
    "nothing unloaded" is a failed cycle, not a balanced one (Pulsar's ``LoadSheddingTask`` logs
    "Error during the load shedding" and tries again next interval)."""
    failed = [c for c in r.cycles if c.failure]
    if not failed:
        return ""
    which = ", ".join(str(c.cycle) for c in failed[:10]) + (", …" if len(failed) > 10 else "")
    messages = sorted({c.failure for c in failed})
    return (f"The shedding strategy threw in {len(failed)} of {len(r.cycles)} cycle(s) "
            f"(cycle{'s' if len(failed) > 1 else ''} {which}): {messages[0]}"
            + (f" (and {len(messages) - 1} other error(s))" if len(messages) > 1 else "")
            + "; Pulsar's LoadSheddingTask logs \"Error during the load shedding\" and unloads "
            "nothing in such a cycle.")


def host_words(r: SimulationResult, name: Callable[[str], str] = str) -> str:
    """Each broker's host in a few words: cores, idle share, per-message cost."""
    hosts = list(r.truth_hosts.items())
    words = ", ".join(f"{name(b)} {h.cores} cores {h.idle_cpu * 100:.0f}% idle "
                      f"{h.cpu_us_per_msg:.0f} us/msg" for b, h in hosts[:12])
    return words + (", …" if len(hosts) > 12 else "") + "."


def _truth_words(r: SimulationResult) -> str:
    """How the truth was chosen, when not the default (hosts inferred from the reports)."""
    if r.hosts == "inferred":
        return ""
    if r.hosts in ("mixed", "given"):  # --hosts mixed; the API's SimulationOptions.hosts
        return f"; truth: {r.hosts} hosts"
    return f"; truth: hosts of {r.hosts}"


@dataclass(frozen=True)
class SimulationView:
    result: SimulationResult
    schema: ClassVar[Schema] = SIMULATION_SCHEMA

    def to_data(self) -> Any:
        r = self.result
        return {
            "format": SIMULATION_FORMAT,
            **_header(r),
            "settings": dict(r.settings),
            "model": r.model.describe(),
            "summary": _summary(r),
            "cycles": [_cycle_dict(r, c) for c in r.cycles],
            "final": {"brokers": {b: rounded(v) for b, v in r.final_loads.items()},
                      "spread": {k: rounded(v) for k, v in r.final.to_dict().items()}},
        }

    def to_rows(self) -> list[dict[str, Any]]:
        r = self.result
        brokers = r.brokers()
        rows = []
        for c in r.cycles:
            pred = c.predicted or {}
            errors = _errors(r, c)
            cycle: dict[str, Any] = {
                **c.spread.to_dict(),
                "unloads": len(c.moves), "skipped": c.skipped,
                "throughputMoved": c.moved_throughput, "msgRateMoved": c.moved_msg_rate,
                "bounceBacks": sum(m.bounce_back for m in c.moves),
                "aboveAveragePlacements": sum(m.above_average for m in c.moves),
                "reportsWritten": c.reports_written,
            }
            for b in brokers:
                if b not in c.loads:
                    continue
                rows.append({
                    "cycle": c.cycle, "at": iso_time(c.at),
                    "minute": (c.at - r.start) // 60_000, "broker": b,
                    "load": c.loads.get(b), "reported": c.reported.get(b),
                    "predicted": pred.get(b), "predictionError": errors.get(b),
                    "score": c.scores.get(b), "bundles": c.bundles.get(b, 0),
                    "throughput": c.throughput.get(b, 0.0), "msgRate": c.msg_rate.get(b, 0.0),
                    **cycle})
        return rows

    def to_text(self) -> str:
        r = self.result
        head = (f"{name_safe(r.cluster)} from {iso_time(r.start)}: {r.label}, {len(r.cycles)} cycles of "
                f"{r.interval_minutes} min"
                + (f", trace of {r.trace_snapshots} snapshots" if r.trace_snapshots > 1 else "")
                + (f"; modelled as {_profile_name(r.pulsar_version)}" if r.pulsar_version else "")
                + _truth_words(r))
        shown = list(r.cycles)
        note = ""
        if len(shown) > _FULL_TABLE:
            keep = {1, len(shown)} | {c.cycle for c in shown if c.moves or c.skipped}
            shown = [c for c in shown if c.cycle in keep]
            note = (f"({len(r.cycles) - len(shown)} cycles without unloads not shown; "
                    "-o csv lists every cycle)")
        rows = [
            {"cycle": str(c.cycle), "minute": str((c.at - r.start) // 60_000),
             "mean": pct(c.spread.mean), "std": pct(c.spread.std),
             "min": pct(c.spread.min), "max": pct(c.spread.max),
             "range": pct(c.spread.range), "unloads": str(len(c.moves)),
             "MB/s moved": mb(c.moved_throughput, 1),
             "bounce": str(sum(m.bounce_back for m in c.moves)),
             "above avg": str(sum(m.above_average for m in c.moves))}
            for c in shown
        ]
        final = r.final
        names = BrokerNames.of(r.final_loads, wide=current().wide)
        parts = [wrap_prose(head), "", "Load (weighted max usage) per cycle; cov and reports "
                 "written: -o csv or json:", table(rows)]
        if note:
            parts.append(wrap_prose(note))
        loads = ", ".join(f"{names(b)} {pct(v)}" for b, v in list(r.final_loads.items())[:12])
        parts += ["", wrap_prose(f"After the last cycle: mean {pct(final.mean)}, std "
                                 f"{pct(final.std)}, range {pct(final.range)} ({loads}"
                                 f"{', …' if len(r.final_loads) > 12 else ''})"),
                  wrap_prose(summary_words(r))]
        if failed := failure_words(r):
            parts.append(wrap_prose(failed))
        if r.predicts:
            parts.append(wrap_prose(f"{_PREDICTED}: {prediction_figures(r, names)}."))
        if r.hosts != "inferred":
            parts.append(wrap_prose(f"Truth ({r.hosts} hosts; -o json: truthHosts): "
                                    + host_words(r, names)))
        if names.note():
            parts += ["", wrap_prose(names.note() or "")]
        return "\n".join(parts)


def _prediction_row(r: SimulationResult) -> dict[str, Any]:
    p = r.prediction()
    if p is None:
        return {"prediction": "none", "predictionP50": None, "predictionP95": None,
                "predictionMax": None, "predictionWorstBroker": None}
    worst = p.worst()
    return {"prediction": PREDICTOR, "predictionP50": rounded(p.percentile(0.5)),
            "predictionP95": rounded(p.percentile(0.95)),
            "predictionMax": None if worst is None else rounded(abs(worst[2])),
            "predictionWorstBroker": None if worst is None else worst[1]}


@dataclass(frozen=True)
class ComparisonView:
    result: ComparisonResult
    schema: ClassVar[Schema] = COMPARISON_SCHEMA

    def _runs(self) -> Sequence[SimulationResult]:
        return self.result.runs

    def to_data(self) -> Any:
        runs = self._runs()
        first = runs[0]
        return {
            "format": COMPARISON_FORMAT,
            **{k: v for k, v in _header(first).items() if k not in ("shedding", "placement")},
            "cycles": len(first.cycles),
            "runs": [{"shedding": r.shedding, "placement": r.placement,
                      "settings": dict(r.settings), "summary": _summary(r),
                      "range": [rounded(c.spread.range) for c in r.cycles],
                      "std": [rounded(c.spread.std) for c in r.cycles],
                      "unloads": [len(c.moves) for c in r.cycles]}
                     for r in runs],
        }

    def to_rows(self) -> list[dict[str, Any]]:
        rows = []
        for r in self._runs():
            s = _summary(r)
            rows.append({
                "shedding": r.shedding, "placement": r.placement, "cycles": s["cycles"],
                "finalStd": s["final"]["std"], "finalRange": s["final"]["range"],
                "finalCov": s["final"]["cov"], "unloads": s["unloads"],
                "bundlesMoved": s["bundlesMoved"], "throughputMoved": s["throughputMoved"],
                "bounceBacks": s["bounceBacks"],
                "aboveAveragePlacements": s["aboveAveragePlacements"],
                "settledAtCycle": s["settledAtCycle"], "settleMinutes": s["settleMinutes"],
                **_prediction_row(r),
            })
        return rows

    def to_text(self) -> str:
        runs = self._runs()
        first = runs[0]
        head = (f"{name_safe(first.cluster)} from {iso_time(first.start)}: {len(first.cycles)} cycles of "
                f"{first.interval_minutes} min, initial load range "
                f"{pct(first.cycles[0].spread.range)}, std {pct(first.cycles[0].spread.std)}")
        rows = []
        predicting = any(r.predicts for r in runs)
        for r in runs:
            s = r.summary()
            settled = s["settledAtCycle"]
            rows.append({
                "shedding": r.shedding, "placement": r.placement,
                "final std": pct(s["final"]["std"]), "final range": pct(s["final"]["range"]),
                "unloads": str(s["unloads"]), "MB/s moved": mb(s["throughputMoved"], 1),
                "bounce": str(s["bounceBacks"]), "above avg": str(s["aboveAveragePlacements"]),
                "settled": "never" if settled is None
                else f"cycle {settled} ({s['settleMinutes']} min)",
            })
            if predicting:
                p = r.prediction()
                rows[-1]["err p95"] = "none" if p is None else (
                    "-" if not p.errors else _points(p.percentile(0.95)))
        # strategy names stay whole: the counts give way first (tables.py)
        optional = ("bounce", "above avg", "MB/s moved", "err p95", "final range", "unloads")
        parts = [wrap_prose(head + _truth_words(first)), "", table(rows, optional=optional), "",
                 f"settled = load range within {first.band * 100:g} points from then on",
                 # the two counts a newcomer met without a word on what they count (walk24:
                 # "(every row: bounce 0)"); the same words as the columns' schema
                 wrap_prose(f"bounce = moves back to a broker the bundle left in the last "
                            f"{first.bounce_window_ms / 60_000:g} min; above avg = moves onto a "
                            "broker above the mean load")]
        parts += [wrap_prose(f"{r.label}: {failed}") for r in runs if (failed := failure_words(r))]
        if predicting:
            parts += [wrap_prose("err p95 = 95th percentile of the absolute error (points) of "
                                 "the usage after the plans predicted, against the truth (none: "
                                 "the strategy predicts nothing)"), "", f"{_PREDICTED}:"]
            silent = [r.label for r in runs if not r.predicts]
            if silent:
                parts.append(wrap_prose(f"  {', '.join(silent)}: "
                                        f"{'predict' if len(silent) > 1 else 'predicts'} no "
                                        "usage after (no prediction error)."))
            parts += [wrap_prose(f"  {r.label}: {prediction_figures(r)}.")
                      for r in runs if r.predicts]
        return "\n".join(parts)
