"""Bundle splits: the four split algorithms (``org.apache.pulsar.common.naming``), registered by the
names ``splitAlgorithmName`` takes; which bundles each load manager splits on its own
(``BundleSplitterTask``, ``DefaultNamespaceBundleSplitStrategyImpl``)."""
