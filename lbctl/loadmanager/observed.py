"""What lbctl predicted against what the leader did (``explain`` on a sequence built from
Prometheus, whose snapshots carry the leader's observed decisions: :mod:`lbctl.model.observed`).

For one cycle: the plan's unloads (or transfers) and splits against the increase of the leader's
counters until the next sample, the extensible load manager's ``Success`` decisions by reason
against ``UnloadCounter``'s breakdown, and bundle by bundle the planned unloads against the bundles
that changed owner (and where they went). Agreement is on counts and bundles; the leader may have
acted on a slightly different state (it reads load reports when they change, lbctl at each sample).
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from lbctl.model.cluster import iso_time
from lbctl.model.observed import ObservedDecisions
from lbctl.plan import Plan


class BundleMatch(Struct, frozen=True):
    bundle: str
    predicted: str | None  # "unload b1 → b2", None when not planned
    observed: str | None  # "b1 → b2", None when it did not move


class ObservedComparison(Struct, frozen=True):
    captured_at: str
    until: str
    predicted_unloads: int
    observed_unloads: int | None
    predicted_splits: int
    observed_splits: int | None
    predicted_reasons: dict[str, int] = field(default_factory=dict)
    observed_reasons: dict[str, int] = field(default_factory=dict)
    bundles: tuple[BundleMatch, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def agree(self) -> bool:
        """Counts agree and every planned unload is a bundle that moved (and vice versa)."""
        counts = ((self.observed_unloads is None or self.observed_unloads == self.predicted_unloads)
                  and (self.observed_splits is None
                       or self.observed_splits == self.predicted_splits))
        return counts and all(m.predicted is not None and m.observed is not None
                              for m in self.bundles)

    def to_dict(self) -> dict[str, Any]:
        return {
            "until": self.until,
            "agree": self.agree,
            "unloads": {"predicted": self.predicted_unloads, "observed": self.observed_unloads},
            "splits": {"predicted": self.predicted_splits, "observed": self.observed_splits},
            **({"reasons": {"predicted": self.predicted_reasons,
                            "observed": self.observed_reasons}}
               if self.observed_reasons or self.predicted_reasons else {}),
            "bundles": [{"bundle": m.bundle, "predicted": m.predicted, "observed": m.observed}
                        for m in self.bundles],
            **({"notes": list(self.notes)} if self.notes else {}),
        }

    def to_text(self) -> str:
        def obs(v: int | None) -> str:
            return "not exported" if v is None else str(v)

        lines = [f"Observed (what the leader did from {self.captured_at} until {self.until}): "
                 + ("agrees with the prediction" if self.agree else "DIFFERS from the prediction"),
                 f"  unloads: predicted {self.predicted_unloads}, observed "
                 f"{obs(self.observed_unloads)} (leader's counter)",
                 f"  splits:  predicted {self.predicted_splits}, observed "
                 f"{obs(self.observed_splits)}"]
        if self.predicted_reasons or self.observed_reasons:
            keys = sorted(set(self.predicted_reasons) | set(self.observed_reasons))
            lines.append("  by reason: " + ", ".join(
                f"{k} {self.predicted_reasons.get(k, 0)}/{self.observed_reasons.get(k, 0)}"
                for k in keys) + " (predicted/observed)")
        for m in self.bundles:
            pred = m.predicted or "not planned"
            seen = f"moved {m.observed}" if m.observed else "did not move"
            lines.append(f"  {m.bundle}: {pred}; {seen}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def compare(plan: Plan, observed: ObservedDecisions) -> ObservedComparison:
    unloads = [a for a in plan.actions
               if a.action in ("unload", "transfer") and a.skipped is None]
    splits = [a for a in plan.actions if a.action == "split" and a.skipped is None]
    reasons: dict[str, int] = {}
    if observed.unload_breakdown:
        for a in unloads:
            key = f"Success/{a.reason}"
            reasons[key] = reasons.get(key, 0) + 1
    seen_reasons = {k: v for k, v in observed.unload_breakdown.items() if k.startswith("Success/")}
    moved = {m.bundle: f"{m.source} → {m.destination}" for m in observed.moves}
    planned = {a.bundle: (f"{a.action} {a.broker} → {a.destinationBroker}"
                          if a.destinationBroker else f"{a.action} from {a.broker}")
               for a in unloads}
    bundles = tuple(BundleMatch(b, planned.get(b), moved.get(b))
                    for b in sorted(set(planned) | set(moved)))
    return ObservedComparison(
        plan.captured_at, iso_time(observed.until), len(unloads), observed.unloaded_bundles,
        len(splits), observed.split_bundles, reasons, seen_reasons, bundles, observed.notes)
