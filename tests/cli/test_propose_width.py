"""propose's moves table at 80 columns on a cluster named like the sandbox (``127.0.0.1:8080``
brokers, 36-character bundles): a table, not records, and ``--wide`` brings back what it left
out. Before, the table needed 85 columns (the ``to: before→after`` header was one word of 12
characters) and every move became a record; and the note under it sent the reader to ``--wide``,
which propose refused."""

from __future__ import annotations

from pathlib import Path

from lbctl.cli.app import app
from tests.paths import EXAMPLES


def _loopback_snapshot(tmp_path: Path) -> Path:
    """hot-broker.json with the sandbox's kind of names: brokers 127.0.0.1:8080-8084, and no
    bundle name longer than the sandbox's (36 characters)."""
    text = (EXAMPLES / "hot-broker.json").read_text()
    for n in range(1, 6):
        text = text.replace(f"broker-{n}.pulsar.svc:8080", f"127.0.0.1:{8079 + n}")
    text = text.replace("acme/clickstream", "tenant/streams")
    path = tmp_path / "loopback.json"
    path.write_text(text)
    return path


def _moves(stdout: str) -> list[str]:
    """The lines of the moves part (up to the brokers' table)."""
    part = stdout.split("that move):", 1)[1]
    return part.split("Brokers after the whole plan", 1)[0].strip("\n").splitlines()


def test_the_moves_fit_80_columns_as_a_table(runner, tmp_path: Path) -> None:
    snap = _loopback_snapshot(tmp_path)
    res = runner.invoke(app, ["propose", str(snap), "--solver", "greedy"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.stderr
    moves = _moves(res.stdout)
    assert not any(line.startswith("- ") for line in moves), "\n".join(moves)  # no records
    assert all(len(line) <= 80 for line in res.stdout.splitlines())
    rows = [line.split() for line in moves if line.startswith(("tenant/", "acme/", "public/"))]
    assert len(rows) == 6
    assert all(r[1].startswith("127.0.0.1:80") and r[2].startswith("127.0.0.1:80") for r in rows)
    assert all("→" in r[3] and r[3].endswith("%") for r in rows)
    assert any(line.startswith("(left out to fit 80 columns:") and "--wide" in line
               for line in moves)


def test_wide_shows_the_order_and_the_throughput(runner, tmp_path: Path) -> None:
    snap = _loopback_snapshot(tmp_path)
    res = runner.invoke(app, ["propose", str(snap), "--solver", "greedy", "--wide"],
                        env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.stderr
    moves = _moves(res.stdout)
    assert moves[0].split()[:2] == ["#", "bundle"] and moves[0].split()[-1] == "MB/s"
    assert moves[2].split()[0] == "1" and not any("left out" in line for line in moves)
