"""Fixtures of the loopback Pulsar test cluster (:mod:`lbctl.sandbox`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lbctl.sandbox import TestCluster, hot_cluster
from tests.live.live_helpers import TOKENS, Lbctl


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))


@pytest.fixture
def cluster() -> Iterator[TestCluster]:
    """Three brokers, the first one hot; bearer tokens required."""
    c = hot_cluster(3, tokens=TOKENS)
    yield c
    c.stop()


@pytest.fixture
def lbctl(cluster: TestCluster) -> Lbctl:
    return Lbctl(cluster)
