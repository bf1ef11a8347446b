"""Pulsar's extensible load manager (PIP-192): its data models, TransferShedder, placement, split.

Mirrors ``org.apache.pulsar.broker.loadbalance.extensions``: :mod:`.models` (``BrokerLoadData``,
``TopKBundles``, ``UnloadDecision``), :mod:`.transfer_shedder` (``scheduler.TransferShedder``),
:mod:`.placement` (``strategy.LeastResourceUsageWithWeight``) and :mod:`.filters` (the broker filter
pipeline), :mod:`.split` (``strategy.DefaultNamespaceBundleSplitStrategyImpl``), :mod:`.cycle` (the
unload and split schedulers over a snapshot sequence) and :mod:`.explain` (the reasoning).
"""
