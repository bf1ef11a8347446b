"""The cyclic garbage collector, paused while a cycle runs.

A modular cycle over a large snapshot allocates hundreds of thousands of short-lived, acyclic
records (the shedder's candidates, the placement traces, the plan's rows); each allocation burst
starts a collection that scans the young objects, and every tenth of those scans the older ones,
which cost 8-10 % of `recommend`'s CPU on a snapshot of 1,000,000 bundles for no garbage at all.
Reference counting still frees everything as ever; whatever cyclic garbage a cycle leaves is
collected after it, once the collector runs again. The snapshot readers pause it the same way
(:func:`lbctl.sources.snapshot.read_snapshot_file`). Decisions never depend on it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block; a collector already paused by the caller stays
    paused after it."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
