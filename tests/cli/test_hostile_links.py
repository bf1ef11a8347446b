"""No command reads or writes a file through a symbolic link (hostile13): every user-named input,
configuration, plan, journal, history directory and output is refused when it is a link, in one
line that names the link's target, with exit code 1 — and the target is left as it was.

Real links under ``tmp_path``; the connection flags point at a closed port, so a command that
refused the link first answers 1, one that went on to the network would answer 3."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app

EXAMPLES = Path(__file__).resolve().parents[2] / "lbctl" / "examples"
CLOSED = "http://127.0.0.1:9"  # discard: nothing listens there
VICTIM = b"not lbctl's to touch\n"


def _files(tmp: Path) -> None:
    shutil.copy(EXAMPLES / "hot-broker.json", tmp / "snap.json")
    shutil.copy(EXAMPLES / "two-brokers-90-10.jsonl", tmp / "seq.jsonl")
    (tmp / "broker.conf").write_text("loadBalancerEnabled=true\n")
    (tmp / "hosts.yaml").write_text("{}\n")
    (tmp / "victim").write_bytes(VICTIM)
    (tmp / "dir").mkdir()


def _plan(runner: CliRunner, tmp: Path) -> None:
    res = runner.invoke(app, ["recommend", str(tmp / "snap.json"), "-o", "json"])
    assert res.exit_code == 0, res.output
    (tmp / "plan.json").write_text(res.stdout)


#: name → (what the link points to, the command line with {link} and {tmp}); each reads or
#: writes the link
CASES: dict[str, tuple[str, str]] = {
    "recommend snapshot": ("snap.json", "recommend {link}.json"),
    "recommend sequence": ("seq.jsonl", "recommend {link}.jsonl"),
    "explain snapshot": ("snap.json", "explain {link}.json"),
    "snapshot validate": ("snap.json", "snapshot validate {link}.json"),
    "propose snapshot": ("snap.json", "propose {link}.json"),
    "doctor --broker-conf": ("broker.conf", "doctor {tmp}/snap.json --broker-conf {link}"),
    "recommend --broker-conf": ("broker.conf", "recommend {tmp}/snap.json --broker-conf {link}"),
    "brokers --client-conf": ("broker.conf", f"brokers --client-conf {{link}} --admin-url {CLOSED}"),
    "apply plan": ("plan.json", "apply {link} --dry-run"),
    "journal --journal": ("victim", "journal --journal {link}"),
    "unload --journal": ("victim", f"unload public/default --journal {{link}} --yes "
                                   f"--admin-url {CLOSED}"),
    "snapshot export -f": ("victim", f"snapshot export -f {{link}} --admin-url {CLOSED}"),
    "snapshot export --append": ("seq.jsonl", f"snapshot export --append {{link}} "
                                              f"--admin-url {CLOSED}"),
    "from-prometheus -f": ("victim", f"snapshot from-prometheus --prometheus-url {CLOSED} "
                                     "--since 1h -f {link}.jsonl"),
    "simulate --plot": ("victim", "simulate {tmp}/snap.json --cycles 2 --plot {link}.png"),
    "recommend --plot": ("victim", "recommend {tmp}/snap.json --plot {link}.png"),
    "simulate --hosts": ("hosts.yaml", "simulate {tmp}/snap.json --cycles 1 --hosts {link}"),
    "examples --copy": ("dir", "examples --copy {link}"),
    "plans list --history": ("dir", "plans list --history {link}"),
    "watch --history": ("dir", f"watch --history {{link}} --count 1 --admin-url {CLOSED}"),
}


def _link_name(line: str) -> str:
    """What follows ``{link}`` in the line up to a blank: the extension the flag wants."""
    return line.split("{link}")[1].split(" ")[0]


@pytest.mark.parametrize("case", list(CASES))
def test_a_link_is_refused_in_one_line_and_its_target_is_untouched(
        runner: CliRunner, tmp_path: Path, case: str) -> None:
    target_name, line = CASES[case]
    _files(tmp_path)
    if target_name == "plan.json":
        _plan(runner, tmp_path)
    target = tmp_path / target_name
    suffix = _link_name(line)  # .jsonl/.png: the link carries the extension the flag wants
    link = tmp_path / f"link{suffix}"
    link.symlink_to(target, target_is_directory=target.is_dir())
    before = target.read_bytes() if target.is_file() else sorted(os.listdir(target))
    argv = line.replace("{link}" + suffix, str(link)).replace("{tmp}", str(tmp_path)).split()
    res = runner.invoke(app, argv)
    lines = res.stderr.splitlines()
    assert res.exit_code == 1, (res.exit_code, res.output)
    assert len(lines) == 1 and "Traceback" not in res.output, res.stderr
    assert lines[0].startswith(f"lbctl: error: {link}: is a symbolic link"), lines[0]
    assert f"give the path it points to, {target}," in lines[0]
    assert link.is_symlink()
    after = target.read_bytes() if target.is_file() else sorted(os.listdir(target))
    assert after == before


def test_a_linked_sub_directory_of_examples_copy_is_refused(runner: CliRunner,
                                                             tmp_path: Path) -> None:
    """``examples --copy DIR`` writes ``DIR/extensible/…``: a link planted there, to a directory
    elsewhere, must not receive the copies."""
    dest, elsewhere = tmp_path / "dest", tmp_path / "elsewhere"
    dest.mkdir()
    elsewhere.mkdir()
    sub = next(p.name for p in sorted(EXAMPLES.iterdir()) if p.is_dir() and p.name != "__pycache__")
    (dest / sub).symlink_to(elsewhere, target_is_directory=True)
    res = runner.invoke(app, ["examples", "--copy", str(dest)])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1, res.output
    assert "is a symbolic link" in res.stderr and "nothing was copied" in res.stderr
    assert list(elsewhere.iterdir()) == [] and [p.name for p in dest.iterdir()] == [sub]


def test_a_link_inside_a_snapshot_sequence_directory_is_not_read(runner: CliRunner,
                                                                 tmp_path: Path) -> None:
    """A watcher's history directory given as input: its files are read, a link among them
    is refused like any other input."""
    from lbctl.sources.files import HISTORY_GLOB

    history = tmp_path / "history"
    history.mkdir()
    (tmp_path / "elsewhere.jsonl.gz").write_bytes(b"")
    (history / HISTORY_GLOB.replace("*", "20260101T00")).symlink_to(tmp_path / "elsewhere.jsonl.gz")
    res = runner.invoke(app, ["recommend", str(history)])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1, res.output
    assert "is a symbolic link" in res.stderr


def test_credentials_may_be_links(tmp_path: Path) -> None:
    """The exception: a Kubernetes secret volume mounts each key as a link into ``..data``, so a
    token file read through a link is read (credentials are only ever read)."""
    from lbctl.admin.auth import TokenAuth

    data = tmp_path / "..data"
    data.mkdir()
    (data / "token").write_text("s3cret\n")
    (tmp_path / "token").symlink_to(data / "token")
    auth = TokenAuth(path=str(tmp_path / "token"))
    assert auth.headers() == {"Authorization": "Bearer s3cret"}


def test_from_prometheus_to_standard_output_says_plainly_it_is_not_supported(
        runner: CliRunner) -> None:
    """It said "-: a sequence is written as .jsonl", as if "-" were a file name."""
    res = runner.invoke(app, ["snapshot", "from-prometheus", "--prometheus-url", CLOSED,
                              "--since", "1h", "-f", "-"])
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == ("lbctl: error: -f -: standard output is not supported for a sequence "
                          "(it is written atomically, whole or not at all); give a file name "
                          "ending in .jsonl or .jsonl.gz\n")




def test_a_sandbox_timeline_that_is_a_link_is_refused(tmp_path: Path) -> None:
    """Read directly: before the fix ``lbctl sandbox --timeline LINK`` went on to run the sandbox
    in the foreground, which a test could not stop."""
    from lbctl.errors import ExitStatus
    from lbctl.sandbox.timeline import TimelineError, read

    (tmp_path / "real.yaml").write_text("{}\n")
    (tmp_path / "link.yaml").symlink_to(tmp_path / "real.yaml")
    with pytest.raises(TimelineError, match="link.yaml: is a symbolic link") as refused:
        read(tmp_path / "link.yaml")
    assert refused.value.exit_code == ExitStatus.ERROR
