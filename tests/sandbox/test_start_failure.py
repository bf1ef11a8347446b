"""A sandbox that cannot listen says so from ``start``, whatever the reason (it used to wait 30 s
for a readiness never signalled, then return a half-started cluster)."""

from __future__ import annotations

import pytest

from lbctl.sandbox.server import TestCluster


def test_a_port_range_past_65535_is_raised_by_start() -> None:
    with pytest.raises(OverflowError):
        TestCluster().start(3, port=65535)  # 65536 and 65537 cannot be bound
