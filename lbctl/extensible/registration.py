"""``TransferShedder`` in the SHEDDING registry, behind the modular shedding protocol.

``recommend``/``explain`` send an extensible snapshot, or ``--strategy TransferShedder``, to the
extensible cycle (:mod:`lbctl.extensible.cycle`), which is the faithful path. This adapter exists so
that code driving the modular cycle (:class:`lbctl.cycle.LoadManager`) with a strategy from the
registry also gets TransferShedder's decisions: it derives ``BrokerLoadData`` from each modular
report exactly as the extensible cycle does (:func:`lbctl.extensible.models.from_local_broker_data`,
EMAs carried in the strategy memory), and returns TransferShedder's decisions as selections whose
destination is the shedder's own (transfer mode).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lbctl.config import Settings
from lbctl.extensible.transfer_shedder import NAME, PACKAGE, ShedderInput, TransferShedder
from lbctl.model.brokerload import BrokerLoadData, from_local_broker_data, top_k_bundles
from lbctl.model.decision import BrokerVerdict, Label, Reason, Selection, SheddingDecision
from lbctl.model.javaorder import concurrent_order, java_hash_order
from lbctl.model.loaddata import LoadData
from lbctl.strategies.registry import SHEDDING


@dataclass(frozen=True)
class _Memory:
    hit_count: int = 0
    loads: dict[str, BrokerLoadData] = field(default_factory=dict)


class TransferShedderAdapter:
    name = NAME

    def initial_memory(self) -> Any:
        return _Memory()

    def shed(self, load: LoadData, settings: Settings, memory: Any
             ) -> tuple[SheddingDecision, Any]:
        mem = memory if isinstance(memory, _Memory) else _Memory()
        store: dict[str, BrokerLoadData] = {}
        for b, bd in load.brokers.items():
            sample = from_local_broker_data(bd.local, settings, load.now)
            prev = mem.loads.get(b)
            store[b] = (prev.update_from(sample, settings)
                        if prev is not None and sample.updatedAt > prev.updatedAt
                        else prev or sample)
        store = {b: store[b] for b in concurrent_order(store)}
        k = int(settings["loadBalancerMaxNumberOfBundlesInBundleLoadReport"])
        tops = {b: top_k_bundles(((x, bd.local.lastStats[x])
                                  for x in java_hash_order(bd.local.lastStats)), k, settings)
                for b, bd in load.brokers.items()}
        ctx = ShedderInput(settings, load.now, store, tops, list(load.brokers),
                           dict(load.recently_unloaded))
        res = TransferShedder().find_bundles_for_unloading(ctx, mem.hit_count)
        selections = []
        verdicts: dict[str, BrokerVerdict] = {}
        for d in res.decisions:
            top = next((t for t in tops.get(d.unload.source, ())
                        if t.bundleName == d.unload.bundle), None)
            reason = Reason(str(d.reason))
            selections.append(Selection(
                d.unload.source, d.unload.bundle, reason,
                top.stats.msgRateIn + top.stats.msgRateOut if top else 0.0,
                top.throughput if top else 0.0, d.unload.destination))
            verdicts[d.unload.source] = BrokerVerdict(
                d.unload.source, store[d.unload.source].weightedMaxEMA,
                store[d.unload.source].weightedMaxEMA, Label.SUCCESS, reason)
        notes = (res.why,)
        decision = SheddingDecision(NAME, tuple(selections), verdicts, (), notes,
                                    {"avg": res.avg, "std": res.std, "hitCount": res.hit_count})
        return decision, _Memory(res.hit_count, store)


SHEDDING.register(NAME, PACKAGE)(TransferShedderAdapter)
