"""The loopback test cluster (bearer tokens required) and a foreign host on 127.0.0.2."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lbctl.sandbox import TestCluster, hot_cluster
from tests.live.live_helpers import TOKENS, Lbctl
from tests.security.foreign import Foreign, foreign_host_available


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "journal.jsonl"))


@pytest.fixture
def foreign() -> Iterator[Foreign]:
    if not foreign_host_available():  # pragma: no cover - every Linux loopback is 127/8
        pytest.skip("127.0.0.2 cannot be bound here")
    f = Foreign().start()
    yield f
    f.stop()


@pytest.fixture
def cluster() -> Iterator[TestCluster]:
    c = hot_cluster(3, tokens=TOKENS)
    yield c
    c.stop()


@pytest.fixture
def lbctl(cluster: TestCluster) -> Lbctl:
    return Lbctl(cluster)
