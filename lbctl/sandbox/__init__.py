"""A Pulsar-admin-compatible cluster on loopback, for tests and for trying lbctl without a real
cluster: many brokers on their own ports over one shared state (:mod:`.server`), and ready-made
scenarios (:mod:`.scenarios`). Standard library only."""

from lbctl.sandbox.scenarios import (
    EXTENSIBLE_BROKERS,
    FULL,
    Fault,
    TestCluster,
    equal_boundaries,
    extensible_cluster,
    fmt,
    hot_cluster,
)

__all__ = ["EXTENSIBLE_BROKERS", "FULL", "Fault", "TestCluster", "equal_boundaries",
           "extensible_cluster", "fmt", "hot_cluster"]
