"""How sure lbctl is that a plan lands in the band: lbctl's own figure, from its load model's
error estimates, never from Pulsar (Pulsar's load managers make no such estimate).

A moved broker's predicted usage after the plan is its usage now plus a change the load model
computes from its fitted slope; the model knows how well it knows that slope
(:attr:`lbctl.model.loadmodel.Quality.slope_error`, relative; while the model is young,
:meth:`~lbctl.model.loadmodel.LoadModel.change_error` is larger and is taken instead). So each
moved broker's usage after is predicted to within ``σ = relative error × |change|`` (1 σ), and
never more than the relative error × its usage after (the model's line starts from the broker's
idle usage, so a slope off by x % puts the usage off by at most x % of it: a broker shedding 200
points to 50 % is not off by x % of 200), and, for a broker learnt from its own history, never
more than its held-out miss (:meth:`~lbctl.model.loadmodel.LoadModel.held_out_error`: the RMS
share of the usage by which a fit on its earlier reports missed its latest quarter) × its usage
after — a measured error of the line the usage after is read from, where the slope's error × the
change is only the model's bound (calib29: without it the figure was under-confident from 60
brokers up, mean 0.34 predicted against 0.80 in band at 120 brokers). The brokers' errors are
drawn independent: the held-out misses' common mean, a fleet-wide shift, carries 0.3–3 % of their
mean square from 12 brokers up (``benchmarks/plans_on_hardware.py`` seeds 1–20). The
plan's probability of landing in the band is that of ``max − min <= width`` and ``max <= cap``
with each moved broker drawn from a normal law around its prediction and the unmoved brokers at
theirs: a fixed number of draws from a fixed seed (a work-unit limit, not wall clock), over the
brokers in name order, so the same input gives the same figure whatever the snapshot's order.

Level errors (a broker's usage now) are left to the margin the band is planned inside by; the
figure is about the change, which is where the misses of history-learnt plans come from
(model30's split of the error: the start's share of the variance is 0.11–0.14).

A receiver whose 2 σ exceeds half the planned band cannot be assured to land in it: the note
names such receivers and what would help — a split of the bundle that carries most of its
change, when one does, else a part-way fill and a second plan once it has reported on its new
traffic (so the model learns its cost). The plan itself is not changed by any of this.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from lbctl.planner.propose import Proposal

#: how many joint draws the probability is estimated from (at most; see :data:`DRAW_BUDGET`)
DRAWS = 4000
#: the most normal numbers drawn for one plan (draws × moved brokers): the work-unit limit
DRAW_BUDGET = 2_000_000
#: the fewest draws, whatever the plan's size
LEAST_DRAWS = 200
#: the draws' seed (fixed: the same plan gets the same figure)
SEED = 29
#: a bundle "carries most" of a receiver's change when its share is above this
DOMINANT = 0.5
#: how many uncertain receivers the note names (the JSON lists them all)
NAMED = 5

BY = "lbctl's own figure, from its load model's error estimates (Pulsar makes none)"


class Receiver(Struct, frozen=True):
    """One moved broker's predicted usage after the plan and its 1-σ error (fractions)."""

    broker: str
    before: float
    after: float
    sigma: float  # 1 σ of the predicted change
    relative_error: float  # the slope's relative error the σ comes from
    dominant: str | None = None  # the bundle carrying most of a receiver's change, if any

    def to_dict(self) -> dict[str, object]:
        return {"broker": self.broker, "usageBefore": round(self.before, 6),
                "usageAfter": round(self.after, 6), "sigma": round(self.sigma, 6),
                "low1Sigma": round(self.after - self.sigma, 6),
                "high1Sigma": round(self.after + self.sigma, 6),
                "relativeError": round(self.relative_error, 4),
                "dominantBundle": self.dominant}


class Confidence(Struct, frozen=True):
    """A plan's confidence (see the module docstring). ``assessed`` is false, with ``why``, when
    there is nothing to assess (no move, a band given as a std) or the model cannot say (a
    snapshot calibration has no error estimate of its own)."""

    assessed: bool
    why: str = ""
    probability: float | None = None  # of landing in the band (and under the cap)
    width: float = 0.0  # the target band (fraction)
    half_planned: float = 0.0  # half the band planned (fraction): the bar for "uncertain"
    draws: int = 0
    brokers: tuple[Receiver, ...] = ()
    uncertain: tuple[str, ...] = ()  # receivers whose 2 σ exceeds half the planned band

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"by": BY, "assessed": self.assessed}
        if not self.assessed:
            out["why"] = self.why
            return out
        out.update({
            "probabilityInBand": None if self.probability is None else round(self.probability, 4),
            "targetRange": round(self.width, 6), "halfBandPlanned": round(self.half_planned, 6),
            "draws": self.draws, "brokers": [r.to_dict() for r in self.brokers],
            "uncertainReceivers": list(self.uncertain), "note": note(self)})
        return out

    def line(self) -> str:
        """The text view's line."""
        if not self.assessed:
            return f"Confidence (lbctl's own figure): not assessed — {self.why}"
        p = "n/a" if self.probability is None else f"{self.probability:.0%}"
        widest = max(self.brokers, key=lambda r: (r.sigma, r.broker), default=None)
        tail = ""
        if widest is not None and widest.sigma > 0:
            tail = (f"; widest: {widest.broker} {widest.after * 100:.1f} % ± "
                    f"{widest.sigma * 100:.1f} points (1 σ)")
        return (f"Confidence (lbctl's own figure, from its load model's errors): {p} chance the "
                f"plan lands in the band (each moved broker's predicted change ± its slope's "
                f"error){tail}")


def note(c: Confidence) -> str | None:
    """The one-line note naming the receivers whose 2 σ exceeds half the planned band, and what
    would help each; ``None`` when there is none."""
    if not c.uncertain:
        return None
    by_name = {r.broker: r for r in c.brokers}
    parts = []
    for b in c.uncertain[:NAMED]:
        r = by_name[b]
        help_ = (f"split {r.dominant}, which carries most of it" if r.dominant
                 else "fill it part-way and plan again once it reports")
        parts.append(f"{b} {r.before * 100:.1f} -> {r.after * 100:.1f} % ± "
                     f"{2 * r.sigma * 100:.1f} (2 σ; {help_})")
    more = len(c.uncertain) - NAMED
    return (f"landing in the band is not assured: the load model knows the cost of "
            f"{len(c.uncertain)} receiver(s) too little (2 σ of the predicted change above half "
            f"the planned band, {c.half_planned * 100:.1f} points): " + "; ".join(parts)
            + (f"; and {more} more" if more > 0 else ""))


def confidence(p: Proposal) -> Confidence:
    """``p``'s confidence (module docstring)."""
    if not p.moves:
        return Confidence(False, "the plan moves nothing")
    m = p.view.model
    if not m.history:
        # (worded for a live read as for a file: a live command never says "snapshot")
        return Confidence(False, "a load model calibrated on one reading of the cluster has no "
                                 "error estimate of its own; give it a history (a sequence of "
                                 "readings: a .jsonl, or Prometheus with --since)")
    if p.targets.target_range is None:
        return Confidence(False, "the band is given as a standard deviation; the figure is "
                                 "for a range")
    view = p.view
    before, after = p.usages_before(), p.usages_after()
    gain = _incoming(p)
    width = p.targets.target_range
    planned = p.solution.width if p.solution.width > 0 else width
    rows = []
    for j, b in enumerate(view.brokers):
        d = after[j] - before[j]
        if abs(d) <= 1e-12:
            continue
        q = m.quality.get(b)
        rel = max(q.slope_error if q is not None else 0.0, m.change_error(b))
        dominant = None
        if d > 0 and gain[j]:
            total = sum(g for g, _ in gain[j])
            g, bundle = max(gain[j], key=lambda t: (t[0], t[1]))
            if total > 0 and g > DOMINANT * total:
                dominant = bundle
        # the slope's error moves the change, and at most the usage its traffic makes after
        # (a broker shedding 200 points to 50 % cannot be off by more than its slope's error of
        # 50 %: the model's line starts from the broker's idle usage)
        sigma = rel * min(abs(d), max(after[j], 0.0))
        # a learnt broker's line was checked on reports it was not fitted on: what it missed
        # them by (a share of the usage) is a measured error of that line at a level, and the
        # usage after is a point on the same line (calib29)
        held = m.held_out_error(b)
        if held is not None:
            sigma = min(sigma, held * max(after[j], 0.0))
        rows.append(Receiver(b, before[j], after[j], sigma, rel, dominant))
    half = planned / 2
    uncertain = tuple(r.broker for r in sorted(
        (r for r in rows if r.after > r.before and 2 * r.sigma > half),
        key=lambda r: (-r.sigma, r.broker)))
    fixed = [after[j] for j, b in enumerate(view.brokers)
             if not any(r.broker == b for r in rows)]
    prob, draws = _probability(fixed, [(r.after, r.sigma) for r in rows], width,
                               p.targets.max_usage)
    return Confidence(True, "", prob, width, half, draws, tuple(rows), uncertain)


def _incoming(p: Proposal) -> list[list[tuple[float, str]]]:
    """Per broker, what each bundle it takes adds to its usage alone (the model's terms)."""
    view = p.view
    out: list[list[tuple[float, str]]] = [[] for _ in view.brokers]
    for i, dst in p.moves:
        t = view.terms[dst]
        out[dst].append((t.usage(view.drivers[i]) - t.usage(), view.bundles[i]))
    return out


def _probability(fixed: Sequence[float], drawn: Sequence[tuple[float, float]], width: float,
                 cap: float) -> tuple[float, int]:
    """P(max − min <= width and max <= cap) for the ``fixed`` usages and the ``drawn`` ones
    (mean, 1 σ; independent normals), from a fixed number of seeded draws."""
    import numpy as np

    eps = 1e-9
    random = [(mu, s) for mu, s in drawn if s > 0]
    known = list(fixed) + [mu for mu, s in drawn if s <= 0]
    if not random:
        top, low = max(known), min(known)
        return (1.0 if top - low <= width + eps and top <= cap + eps else 0.0), 0
    draws = max(LEAST_DRAWS, min(DRAWS, DRAW_BUDGET // len(random)))
    rng = np.random.default_rng(SEED)
    mu = np.array([x for x, _ in random])
    sd = np.array([s for _, s in random])
    u = mu + sd * rng.standard_normal((draws, len(random)))
    top, low = u.max(axis=1), u.min(axis=1)
    if known:
        top = np.maximum(top, max(known))
        low = np.minimum(low, min(known))
    ok = (top - low <= width + eps) & (top <= cap + eps)
    return float(ok.mean()), draws
