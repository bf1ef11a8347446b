"""The journal record (:mod:`lbctl.model.wire.journal`): written in its declared order, read back
whole, and its one time parser reads both forms a journal has held."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from lbctl.model.wire.journal import JournalRecord, format_time, record_time, seconds_of


def test_a_request_line_is_written_in_order_and_read_back() -> None:
    rec = JournalRecord(time=format_time(1773324300.123), run="r1", state="done",
                        action="unload t/ns/0x00000000_0xffffffff", method="PUT", url="http://b/x",
                        body=None, status=204, error=None, step=3, plan="p.json")
    line = msgspec.json.encode(rec)
    assert list(msgspec.json.decode(line)) == ["time", "run", "state", "action", "method", "url",
                                               "body", "status", "error", "plan", "step"]
    assert msgspec.json.decode(line, type=JournalRecord) == rec


def test_the_one_time_parser() -> None:
    assert record_time("2026-03-12T14:05:00.123Z") == datetime(2026, 3, 12, 14, 5, 0, 123000,
                                                               tzinfo=UTC)
    assert record_time(1773500000) == datetime.fromtimestamp(1773500000, UTC)  # older journals
    assert record_time("2026-03-12T14:05:00") == datetime(2026, 3, 12, 14, 5, tzinfo=UTC)
    assert format_time(seconds_of("2026-03-12T14:05:00.123Z") or 0) == "2026-03-12T14:05:00.123Z"
    assert seconds_of("yesterday") is None and seconds_of(None) is None
    with pytest.raises(ValueError):
        record_time(True)
