"""The cyclic garbage collector, paused while lbctl makes many objects at once.

Reading a large snapshot or a Prometheus history, and running a modular cycle over it, allocate
hundreds of thousands of short-lived or long-lived *acyclic* containers (decoded reports, the
shedder's candidates, the placement traces, the plan's rows). Each allocation burst starts a
collection that scans the young objects, and every tenth of those the older ones: a third of a
large snapshot's load time and 8-10 % of `recommend`'s CPU at 1,000,000 bundles, for no garbage
at all. Reference counting still frees everything as ever; whatever cyclic garbage a block leaves
is collected once the collector runs again. Decisions never depend on it.

The one place that pauses it (the snapshot readers, the Prometheus history, the modular cycle and
its plan); it imports nothing of lbctl, so any layer may use it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic collection inside the block; a collector already paused by the caller stays
    paused after it. ``freeze``: what the block made is long-lived (the snapshots read) — moved
    out of the collector's generations (``gc.freeze``) before it runs again, so that its first
    collection does not scan them all."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        gc.enable()
