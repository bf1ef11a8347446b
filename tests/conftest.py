"""Fixtures every test shares."""

import pytest


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
