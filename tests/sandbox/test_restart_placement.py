"""Where the modular leader sends load after a broker restarts, as Pulsar's does (apache/pulsar
``ModularLoadManagerImpl`` read at 009a9bf2, ``LeastLongTermMessageRate`` at 06c80c77).

live22 saw the leader's cycle at 5 min send the hot broker's bundles to 8082, not to 8081, which
its scenario restarted at 5 min. That cycle ran at the same cluster instant as the restart, and
the sandbox runs a cycle before the events of its instant (``Life.advance``): it decided on the
two brokers then alive. Pulsar does the same with a broker that has not registered yet:

* ``doLoadShedding`` picks each destination with ``selectBroker`` among ``getAvailableBrokers()``,
  the brokers holding a lock under ``/loadbalance/brokers``. A restarting broker takes its lock in
  ``start()`` with its first ``LocalBrokerData``; until then it is no candidate.
* Once it has, the lock's notification runs ``updateAll`` on the leader
  (``handleDataNotification``): ``updateAllBrokerData`` gives it a new ``BrokerData`` (its old one
  went with ``Remove obsolete brokers`` when its lock vanished), and ``updateBundleData`` rebuilds
  its ``TimeAverageBrokerData`` from its own ``lastStats``: no bundle, a long-term rate of 0. Its
  placement score (``LeastLongTermMessageRate.getScore``) is then the least, and with
  ``loadBalancerDistributeBundlesEvenlyEnabled`` (default true) it also owns the fewest bundles of
  the namespace (``removeMostServicingBrokersForNamespace``). So the next cycle fills it.
* Within one cycle nothing is preallocated (``selectBroker``, not ``selectBrokerForAssignment``),
  so every bundle of the cycle goes to that one broker.

A restarted broker is never excluded for lack of history: a broker without load data would not
be in ``loadData.getBrokerData()`` at all, and one with a first report has a zero time average.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from lbctl.sandbox import TestCluster
from lbctl.sandbox.clock import SteppedClock
from lbctl.sandbox.leader import Decision
from lbctl.sandbox.life import Life
from lbctl.sandbox.scenarios import SCENARIOS, living

pytestmark = pytest.mark.live


@contextmanager
def _story(restart_at: float) -> Iterator[tuple[TestCluster, Life, str]]:
    """The operator's story (docs/commands/sandbox.md): the hot-broker scenario, broker 1 crashed
    at 4 min and restarted at ``restart_at`` s, run second by second to 6 min 10 s."""
    c = SCENARIOS["hot-broker"].start(3, 0, alive=True)
    try:
        clock = SteppedClock()
        t0 = clock.now()
        life = living(c, clock, events=[{"at": "4m", "crash": 1},
                                        {"at": f"{restart_at:g}s", "restart": 1}])
        restarted = list(c.brokers)[1]
        for s in range(1, 371):
            clock.set(t0 + s)
            life.advance()
        yield c, life, restarted
    finally:
        c.stop()


def _cycle(life: Life, second: int) -> Decision:
    assert life.leader is not None
    t0 = life.leader.decisions[0].at - 60_000
    return next(d for d in life.leader.decisions if d.at == t0 + second * 1000)


def _destinations(d: Decision) -> set[str]:
    return {str(a["destinationBroker"]) for a in d.actions}


def test_a_broker_restarting_at_the_cycles_instant_is_filled_by_the_next_cycle() -> None:
    with _story(300) as (c, life, restarted):
        at_5m, at_6m = _cycle(life, 300), _cycle(life, 360)
        # the cycle at 5 min decided before the broker was back: the one other broker got it all
        assert at_5m.actions and len(_destinations(at_5m)) == 1
        assert restarted not in _destinations(at_5m)
        # a cycle later the restarted broker is the least loaded: everything goes to it
        assert at_6m.actions and _destinations(at_6m) == {restarted}
        assert set(c.bundles_of(restarted)) >= {a["bundle"] for a in at_6m.actions}


def test_a_broker_back_before_the_cycle_gets_all_of_the_cycles_bundles() -> None:
    with _story(290) as (c, life, restarted):
        at_5m = _cycle(life, 300)
        assert at_5m.actions and _destinations(at_5m) == {restarted}
        assert set(c.bundles_of(restarted)) >= {a["bundle"] for a in at_5m.actions}


def test_a_restarted_modular_broker_writes_again_at_its_first_tick() -> None:
    """``ModularLoadManagerImpl.start`` writes the first ``LocalBrokerData`` with its lock but
    leaves ``lastData`` fresh (no bundle, no rate, no usage), so the next
    ``writeBrokerDataOnZooKeeper`` sees its heartbeat bundle as a change from 0 and writes:
    the report's ``lastUpdate`` is a tick old, not the restart's."""
    from tests.sandbox.life_helpers import living_hot, run_for

    c, life, clock = living_hot(3)
    try:
        run_for(life, clock, 5)
        broker = list(c.brokers)[1]
        life.crash(broker)
        run_for(life, clock, 5)
        life.restart(broker)
        first = life.written[broker].at
        run_for(life, clock, 5)
        assert life.written[broker].at == first + 5
    finally:
        c.stop()
