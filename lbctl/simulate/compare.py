"""Several strategies on the same start and the same trace, side by side (``lbctl compare``).

Each run is an independent :func:`lbctl.simulate.engine.simulate` with its own strategy instances,
memory and random generator (seeded alike), so the runs differ only by the strategies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lbctl.config import read_broker_conf
from lbctl.errors import UsageError
from lbctl.loadmanager.select import Options, pair_options, settings_for, strategy_pair
from lbctl.model.cluster import EXTENSIBLE, MODULAR, ClusterState
from lbctl.planner.cycle import offer
from lbctl.records import replace
from lbctl.simulate.engine import SimulationOptions, SimulationResult, check_states, simulate
from lbctl.strategies.builtin import PLACEMENT
from lbctl.strategies.shedding.transfer import NAME as TRANSFER_SHEDDER


@dataclass(frozen=True, slots=True)
class Pair:
    """A shedding strategy and, optionally, the placement strategy it runs with."""

    shedding: str
    placement: str | None = None


def parse_pairs(values: Sequence[str], placement: str | None = None) -> list[Pair]:
    """``--strategy NAME`` or ``--strategy NAME:PLACEMENT`` items → pairs (names resolved;
    ``lbctl`` is lbctl's own planner, which places its bundles itself).

    ``placement`` applies to the items that name none (else each run uses the snapshot's
    ``loadBalancerLoadPlacementStrategy``).
    """
    if not values:
        raise UsageError("give at least one --strategy to compare")
    pairs: list[Pair] = []
    own = offer()
    for v in values:
        pair = Pair(*strategy_pair(v, placement, own))
        if pair in pairs:
            raise UsageError(f"strategy {v!r} is given twice")
        pairs.append(pair)
    return pairs


@dataclass(frozen=True)
class ComparisonResult:
    """One simulation per pair, in the order given."""

    runs: tuple[SimulationResult, ...]


def compare(states: Sequence[ClusterState], opts: Options, pairs: Sequence[Pair],
            sim: SimulationOptions | None = None, *,
            progress: Callable[[int, int], None] | None = None) -> ComparisonResult:
    """Simulate each pair. A pair without a placement takes ``--placement``, else the snapshot's
    ``loadBalancerLoadPlacementStrategy`` — except that a snapshot configured with AvgShedder as
    placement gives the other shedders Pulsar's default placement (LeastLongTermMessageRate), since
    Pulsar refuses AvgShedder placement with any other shedder.

    On extensible snapshots, TransferShedder runs the extensible load manager; any other shedder
    runs the modular load manager on the brokers' load reports (``brokers``: the
    ``LocalBrokerData`` a modular cluster would publish), so that both answer "what if"."""
    check_states(states)
    conf = read_broker_conf(opts.broker_conf) if opts.broker_conf else {}
    extensible = all(st.load_manager == EXTENSIBLE for st in states)
    as_modular = [replace(st, load_manager=MODULAR) for st in states] if extensible else states
    configured = PLACEMENT.short_name(
        settings_for(states[0], opts, conf)["loadBalancerLoadPlacementStrategy"])
    own = offer()
    runs: list[SimulationResult] = []
    for i, p in enumerate(pairs):

        def step(done: int, total: int, i: int = i) -> None:
            if progress is not None:
                progress(i * total + done, len(pairs) * total)

        start = as_modular if extensible and p.shedding != TRANSFER_SHEDDER else states
        runs.append(simulate(start, pair_options(opts, p.shedding, p.placement, configured, own),
                             sim, progress=step))
    return ComparisonResult(tuple(runs))
