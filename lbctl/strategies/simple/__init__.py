"""The legacy ``SimpleLoadManagerImpl``'s decisions (Pulsar master
0058e734a959d09d03408923370b02424627b9ac), as pure functions over load reports:

* :mod:`.quota` — ``ResourceQuota`` (``BundlesQuotas.INITIAL_QUOTA``), the time smoothing of
  ``updateRealtimeResourceQuota`` and the CPU/memory load factors it learns;
* :mod:`.ranking` — ``ResourceUnitRanking``: each broker's estimated load percentage (used
  resources or allocated quotas, whichever is more, plus preallocated quotas), its capacity in
  bundles (``calculateBrokerMaxCapacity``), ``compareTo`` with its 5 % bands, and the final rank of
  ``doLoadRanking`` per ``loadBalancerPlacementStrategy``;
* :mod:`.report` — the JDK 17 iteration orders of its report and ranking maps;
* :mod:`.treemap` — Java's ``TreeMap`` with a comparator, for ``LoadReport.getSortedBundleStats``
  (``NamespaceBundleStatsComparator`` never answers 0, so its first key depends on the red-black
  tree's shape);
* :mod:`.decide` — ``getLeastLoadedBroker``/``findBrokerForPlacement`` (placement with
  preallocation), ``getFinalCandidates``, and ``doLoadShedding`` (one bundle per overloaded broker,
  when a candidate is below the comfort level).

Strategies do no I/O: the load manager (:mod:`lbctl.loadmanager.simple`) hands them the reports.
"""
