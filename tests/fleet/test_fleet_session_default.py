"""A session the caller made is found from any thread (lbctl.fleet.session.active_session).

The active session is the JVM thread's: a Python thread with a Py4J connection of its own — or the
main thread after a signal broke its connection during a call (a SIGTERM during ``fleet
ingest``) — saw none, so the next command took the caller's session for its own and stopped it at
its end, and every later Spark call of the process failed (``'NoneType' object has no attribute
'setCallSite'``: CI's four fleet failures after the SIGTERM test)."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from lbctl.fleet.session import active_session


@pytest.mark.spark
def test_a_thread_of_its_own_finds_the_callers_session(spark: Any) -> None:
    found: list[Any] = []
    t = threading.Thread(target=lambda: found.append(active_session(if_imported=True)))
    t.start()
    t.join(60)
    assert found and found[0] is not None
    assert found[0].sparkContext is spark.sparkContext
