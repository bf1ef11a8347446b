"""The live monitor screen: what fits 80×24 is chosen, sorted by a key; in a pseudo-terminal
against the loopback sandbox, ``monitor-brokers`` draws it full-screen, sorts on ``s``, redraws at
a new size on a resize and quits on ``q``; piped, it prints the plain refresh as before."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time

import pytest

from lbctl.monitor.brokers import BrokerMonitor
from lbctl.monitor.live import snapshot_refresh_args
from lbctl.render.monitor_screen import SORT_CYCLE, next_sort, screen
from lbctl.sandbox import hot_cluster
from lbctl.sources.snapshot import read_snapshots
from tests.paths import EXAMPLES

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _refresh(example: str = "hot-broker.json"):
    mon = BrokerMonitor()
    refresh = None
    for st in read_snapshots([EXAMPLES / example]):
        refresh = mon.update(*snapshot_refresh_args(st))
    return refresh


def test_80x24_keeps_header_overall_table_hot_broker_and_keys() -> None:
    lines = screen(_refresh(), sort=None, width=80, height=24, interval=10).split("\n")
    assert len(lines) == 24 and all(len(x) <= 80 for x in lines)
    assert lines[0].startswith("prod-us at 2026-03-12T14:05:00Z: 5 broker(s), 1 overloaded")
    assert lines[1] == "Overall Broker Data"
    assert any(x.startswith("TOTAL") for x in lines)
    assert any("broker-2  OVERLOADED" in x for x in lines)  # the hot broker's own table
    assert lines[-1].startswith("q quit  s sort: weightedMax")
    brokers = [x.split()[0] for x in lines[4:9]]
    assert brokers[0] == "broker-2"  # the most loaded first


def test_a_small_screen_keeps_the_first_brokers_and_counts_the_rest() -> None:
    lines = screen(_refresh(), sort="broker", width=80, height=10, interval=10).split("\n")
    assert len(lines) == 10
    assert [x.split()[0] for x in lines[4:7]] == ["broker-1", "broker-2", "broker-3"]
    assert any(x.startswith("… 2 more broker(s)") for x in lines)
    assert not any("OVERLOADED" in x for x in lines)  # no room for a whole broker table


def test_the_sort_key_cycles() -> None:
    seen = [SORT_CYCLE[0]]
    while len(seen) <= len(SORT_CYCLE):
        seen.append(next_sort(seen[-1]))
    assert seen[-1] == seen[0] and len(set(seen)) == len(SORT_CYCLE)


# --- in a pseudo-terminal against the loopback sandbox -------------------------------------------
def _size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def _read_until(fd: int, buf: bytearray, pattern: str, timeout: float = 20.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                buf += os.read(fd, 65536)
            except OSError:
                break
        frame = _last_frame(buf)
        if re.search(pattern, frame):
            return frame
    raise AssertionError(f"{pattern!r} not on screen; last frame:\n{_last_frame(buf)}")


def _drain(fd: int, buf: bytearray) -> None:
    while select.select([fd], [], [], 0.2)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other side closed
            return
        if not chunk:
            return
        buf += chunk


def _last_frame(buf: bytearray) -> str:
    """The text Rich drew last: what follows the last cursor-home, without colour codes."""
    text = buf.decode(errors="replace")
    return ANSI.sub("", text.rsplit("\x1b[H", 1)[-1]).replace("\r", "")


@pytest.mark.live
@pytest.mark.slow
def test_full_screen_in_a_pty_sorts_resizes_and_quits() -> None:
    cluster = hot_cluster(3)
    master, slave = os.openpty()
    _size(slave, 24, 80)
    env = {**os.environ, "TERM": "xterm-256color", "NO_COLOR": "1"}
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    proc = subprocess.Popen([sys.executable, "-m", "lbctl", "--admin-url", cluster.admin_url,
                             "monitor-brokers", "-i", "1"],
                            stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True,
                            start_new_session=True)
    os.close(slave)
    buf = bytearray()
    try:
        frame = _read_until(master, buf, r"q quit  s sort: weightedMax")
        assert "\x1b[?1049h" in buf.decode(errors="replace")  # the alternate screen
        lines = frame.split("\n")
        assert len(lines) <= 24 and all(len(x) <= 80 for x in lines), frame
        assert "Overall Broker Data" in frame and "OVERLOADED" in frame  # the hot one's table
        os.write(master, b"s")
        _read_until(master, buf, r"s sort: max ")
        _size(master, 30, 120)
        os.killpg(proc.pid, signal.SIGWINCH)
        wide = _read_until(master, buf, r"={100,}", timeout=10)  # drawn at the new width
        assert max(len(x) for x in wide.split("\n")) > 80
        os.write(master, b"q")
        assert proc.wait(timeout=15) == 0
        _drain(master, buf)
        assert "\x1b[?1049l" in buf.decode(errors="replace")  # the terminal given back
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        cluster.stop()


@pytest.mark.live
def test_piped_prints_the_plain_refresh() -> None:
    """Not a terminal: the plain tables of today, no screen control codes."""
    from typer.testing import CliRunner

    from lbctl.cli.app import app

    cluster = hot_cluster(3)
    try:
        res = CliRunner().invoke(app, ["--admin-url", cluster.admin_url, "monitor-brokers",
                                       "-n", "1"])
    finally:
        cluster.stop()
    assert res.exit_code == 0, res.output
    assert "\x1b" not in res.stdout and res.stdout.count("||SYSTEM") == 3


def test_no_sort_given_is_the_first_key_so_s_goes_to_the_second() -> None:
    assert next_sort(None) == SORT_CYCLE[1]
    assert next_sort("nonsense") == SORT_CYCLE[0]


def _busier_refresh():
    """hot-broker.json with broker-2 at twice its throughput: 1,130,496 KB/s in + out, a
    ten-character cell (``1130496.00``), as the sandbox's hot broker carries (1078928.83)."""
    from lbctl.records import replace

    st = read_snapshots([EXAMPLES / "hot-broker.json"])[-1]
    b = next(x for x in st.brokers if x.startswith("broker-2"))
    rep = st.brokers[b]
    hot = replace(rep, msgThroughputIn=rep.msgThroughputIn * 2,
                  msgThroughputOut=rep.msgThroughputOut * 2)
    st = replace(st, brokers={**st.brokers, b: hot})
    return BrokerMonitor().update(*snapshot_refresh_args(st))


def test_ten_character_values_keep_the_broker_tables_whole_at_80_columns() -> None:
    """A value may fill its cell (the ``|`` after it parts it from the next): the blocks took 87
    columns and the table format's 80-column fitting broke every framed line in two."""
    from lbctl.render.display import Display, using
    from lbctl.render.monitor import MonitorView

    with using(Display(width=80)):
        text = MonitorView(_busier_refresh()).to_text()
    framed = [x for x in text.split("\n") if x.startswith(("||", "=="))]
    assert framed and all(len(x) <= 80 for x in framed)
    assert all(x.endswith("||") for x in framed if x.startswith("||"))
    assert "|1130496.00||" in text


def test_a_narrow_screen_shows_every_broker_in_a_table_with_its_state() -> None:
    """The overall table with ten-character KB/S and the sandbox's 14-character broker names took
    84 columns and became records, eight lines a broker: at 80x24 one broker of three was shown.
    LONG/S gives way first (named under it), never STATE (walk18: STATE went first, and with it
    the word "overloaded"); here at 72 columns with the example's short names."""
    lines = screen(_busier_refresh(), sort=None, width=72, height=24, interval=10).split("\n")
    assert lines[2].startswith("BROKER") and "LONG/S" not in lines[2]
    assert lines[2].split()[-1] == "STATE"
    assert [x.split()[0] for x in lines[4:10]] == [
        "broker-2", "broker-4", "broker-3", "broker-1", "broker-5", "TOTAL"]
    assert lines[4].split()[-1] == "overloaded"
    assert lines[10].startswith("(left out to fit 72 columns: LONG/S")


@pytest.mark.parametrize("width", range(56, 85, 4))
def test_the_overall_table_keeps_state_whatever_gives_way(width: int) -> None:
    """At every width the overall table is drawn at, STATE is in it and broker-2 is said to be
    overloaded; what gave way is named under it and is never STATE (walk18)."""
    from lbctl.render.display import Display, using
    from lbctl.render.monitor import overall

    refresh = _busier_refresh()
    with using(Display(width=width)):
        text = overall(list(refresh.rows), refresh.total())
    lines = text.split("\n")
    if lines[1].startswith("- "):  # too narrow for any table: records, STATE among the fields
        assert "  STATE:  overloaded" in lines and width < 64, text
        return
    assert lines[1].split()[-1] == "STATE", text
    assert all(len(x) <= width for x in lines if not x.startswith("("))  # the note: prose
    assert any(x.startswith("broker-2") and x.endswith("overloaded") for x in lines), text
    left_out = [x for x in lines if x.startswith("(left out to fit")]
    assert all("STATE" not in x for x in left_out)


@pytest.mark.parametrize("cluster", ["test-cluster", "pulsar-prod-us-east-1-payments-cluster"])
def test_the_header_is_shortened_never_cropped_inside_the_threshold(cluster: str) -> None:
    """The sandbox's header at 80 columns, with a time in milliseconds, was cropped to
    '... 1 overloaded (LOAD % >= 8': the threshold read as 8 %."""
    from lbctl.records import replace

    r = _refresh()
    r = replace(r, cluster=cluster, at=1_764_321_391_341)
    head = screen(r, sort=None, width=80, height=24, interval=10).split("\n")[0]
    assert head.endswith("1 overloaded (LOAD % >= 85%)") and len(head) <= 80, head
    assert head.startswith(cluster) == (len(cluster) < 30)  # a long name gives way whole
