"""Fixtures every test shares."""

import os
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import settings

#: Under CI (``CI=true``, as `.ci/run` is run) every property test draws the same examples on
#: every run, and no example is timed: a CI run that lands must not fail on a draw no earlier run
#: met, nor on a loaded machine's slow example (hostile20's random sweep once did). Locally the
#: draws stay random, so new examples keep being explored where a failure can be looked at.
settings.register_profile("ci", derandomize=True, deadline=None, database=None,
                          print_blob=True)
if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
    settings.load_profile("ci")

#: how long a request thread may take to end once its test has (a loaded CI machine is slow)
REQUEST_THREAD_GRACE = 10.0


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests that read a table's content see a 200-column terminal, so that a long strategy or
    bundle name is never wrapped; the width itself is tested at 80 columns (test_golden_outputs,
    tests/render/test_fit.py), with COLUMNS set explicitly."""
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("NO_COLOR", raising=False)
    # no named connection context, PULSAR_HOME or client.conf of the machine leaks into a test
    monkeypatch.setenv("LBCTL_CONTEXTS", "/nonexistent/lbctl-tests/contexts.json")
    monkeypatch.delenv("LBCTL_CONTEXT", raising=False)
    monkeypatch.delenv("PULSAR_HOME", raising=False)
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)


@pytest.fixture(autouse=True)
def _no_request_thread_outlives_its_test() -> Iterator[None]:
    """A loopback server's request thread (socketserver's ``process_request_thread``) started by
    a test ends with it. One that outlived its test (a stalled handler in
    tests/watch/test_watch_sigterm.py slept 30 s) held its server, and freeing the server when
    the thread ended raised a ResourceWarning for its listening socket — an error, by
    ``filterwarnings``, in whichever test ran then. Here it fails the test that left the thread,
    at its teardown (tests/loopback_http.py has a server that joins its request threads)."""
    before = set(threading.enumerate())
    yield
    left = [t for t in threading.enumerate()
            if t not in before and t.name.endswith("(process_request_thread)")]
    deadline = time.monotonic() + REQUEST_THREAD_GRACE
    for t in left:
        t.join(max(0.0, deadline - time.monotonic()))
    alive = [t.name for t in left if t.is_alive()]
    assert not alive, (f"request threads still running {REQUEST_THREAD_GRACE:.0f} s after their "
                       f"test ended: {alive} (close the client, release the handler, join)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Spark tests need Java (17+) and pyspark: without them they skip, saying why, instead of
    erroring (CI has both, so CI runs them)."""
    from lbctl.fleet import _compat

    reason = None
    if not _compat.is_available():
        reason = "pyspark is not installed (pip install -e '.[fleet]')"
    elif _compat.java() is None:
        reason = "Spark needs Java 17+: none on PATH and JAVA_HOME unset"
    if reason is None:
        return
    for item in items:
        if "spark" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))
