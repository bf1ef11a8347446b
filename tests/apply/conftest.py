"""Fixtures of the apply tests: a private journal and lock directory per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lbctl.sandbox import TestCluster
from tests.apply.apply_helpers import busy_cluster


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    monkeypatch.setenv("LBCTL_JOURNAL", str(tmp_path / "state" / "journal.jsonl"))
    monkeypatch.delenv("LBCTL_LOCK_DIR", raising=False)


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    return tmp_path / "state" / "journal.jsonl"


@pytest.fixture
def cluster() -> Iterator[TestCluster]:
    c = busy_cluster()
    yield c
    c.stop()
