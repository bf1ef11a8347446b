"""Views of simulations (``lbctl simulate``) and comparisons (``lbctl compare``).

JSON/YAML: ``lbctl/simulation@1`` — the run's parameters, the load model's calibration, a summary
and every cycle (spread, moves, per-broker load as decided on and as reported); ``compare`` prints
``lbctl/comparison@1``, one summary per run. CSV/JSONL: one row per cycle and broker, the cycle's
figures repeated on each (fixed columns, whatever the brokers); one row per run for ``compare``.
Table: the cycles (quiet ones elided in long runs) and the summary in words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.model.cluster import iso_time
from lbctl.render import table
from lbctl.render.display import current
from lbctl.render.names import BrokerNames
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.simulate.compare import ComparisonResult
from lbctl.simulate.engine import CycleRecord, SimulationResult
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
))


def _cycle_dict(c: CycleRecord) -> dict[str, Any]:
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
             "throughput": c.throughput.get(b, 0.0), "msgRate": c.msg_rate.get(b, 0.0)}
            for b, load in c.loads.items()
        ],
        "moves": [
            {"bundle": m.bundle, "from": m.source, "to": m.destination, "reason": m.reason,
             "throughput": m.throughput, "msgRate": m.msg_rate, "bounceBack": m.bounce_back,
             "aboveAverage": m.above_average}
            for m in c.moves
        ],
    }


def _summary(r: SimulationResult) -> dict[str, Any]:
    s = r.summary()
    for key in ("initial", "final"):
        s[key] = {k: rounded(v) for k, v in s[key].items()}
    s["finalThroughputRatio"] = rounded(s["finalThroughputRatio"])
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
    }


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
            "cycles": [_cycle_dict(c) for c in r.cycles],
            "final": {"brokers": {b: rounded(v) for b, v in r.final_loads.items()},
                      "spread": {k: rounded(v) for k, v in r.final.to_dict().items()}},
        }

    def to_rows(self) -> list[dict[str, Any]]:
        r = self.result
        brokers = r.brokers()
        rows = []
        for c in r.cycles:
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
                    "score": c.scores.get(b), "bundles": c.bundles.get(b, 0),
                    "throughput": c.throughput.get(b, 0.0), "msgRate": c.msg_rate.get(b, 0.0),
                    **cycle})
        return rows

    def to_text(self) -> str:
        r = self.result
        head = (f"{r.cluster} from {iso_time(r.start)}: {r.label}, {len(r.cycles)} cycles of "
                f"{r.interval_minutes} min"
                + (f", trace of {r.trace_snapshots} snapshots" if r.trace_snapshots > 1 else "")
                + (f"; modelled as {_profile_name(r.pulsar_version)}" if r.pulsar_version else ""))
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
        if names.note():
            parts += ["", wrap_prose(names.note() or "")]
        return "\n".join(parts)


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
            })
        return rows

    def to_text(self) -> str:
        runs = self._runs()
        first = runs[0]
        head = (f"{first.cluster} from {iso_time(first.start)}: {len(first.cycles)} cycles of "
                f"{first.interval_minutes} min, initial load range "
                f"{pct(first.cycles[0].spread.range)}, std {pct(first.cycles[0].spread.std)}")
        rows = []
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
        # strategy names stay whole: the counts give way first (tables.py)
        optional = ("bounce", "above avg", "MB/s moved", "final range", "unloads")
        return "\n".join([wrap_prose(head), "", table(rows, optional=optional), "",
                          f"settled = load range within {first.band * 100:g} points from then on"])
