"""lbctl's own planner (``lbctl propose``): one plan, for the whole cluster, against goals.

Pulsar's shedders look at one broker, one pair or one threshold at a time and react cycle by cycle
on history-smoothed scores (PIP-364's over-unloading, PIP-220's thresholds that never fire).
Kafka's Cruise Control plans the whole cluster at once against ordered goals and counts the cost
of each move; this package does the same for Pulsar bundles:

    propose.py      snapshot + options -> Proposal (plan@1 + explanation): the one entry point
    load.py         the load model the planner optimises on (lbctl.model.loadmodel, per resource)
    constraints.py  hard constraints: bundles that must stay, brokers a bundle may not go to
    goals.py        ordered goals (capacity, band, per-resource spread), spread figures, the
                    balancedness score (0-100, like Cruise Control's)
    cost.py         what a move costs (throughput, topics and connections disturbed, one move)
    greedy.py       greedy + local search (any size)
    milp.py         the exact mixed-integer model on HiGHS (scipy.optimize.milp), time-limited
    solve.py        which solver runs, fallbacks, the lower bound and the optimality gap
    splits.py       bundles no move can place: split proposals (split-bundle's preview) or hot
                    single topics
    explain.py      per goal before/after, why each move beat its alternatives
    cycle.py        the planner as a strategy of the simulator (``--strategy lbctl``)

Nothing here does I/O: a snapshot's :class:`~lbctl.model.cluster.ClusterState` and resolved
:class:`~lbctl.config.Settings` in, a :class:`~lbctl.planner.propose.Proposal` out.
"""

#: the planner's name where a strategy name goes (plans, simulations, comparisons)
PLANNER = "lbctl"

