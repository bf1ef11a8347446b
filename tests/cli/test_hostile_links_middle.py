"""A symbolic link in the *middle* of a path (hostile14): a directory on the way to a file is
followed only when the link is yours or root's, sits in a directory no one else can change, and
is part of the system's layout or stays where it is (in ``/``; relative and leading below its
directory; root's when you are not root) — ``lbctl.safe.files.refuse_untrusted_dirs``; before,
only the last component was checked and any linked directory was followed.

Real links under ``tmp_path``. Every reader and writer kind of tests/cli/test_hostile_links.py is
tried through a directory reached by an untrusted link — one owned by another user (root only:
``lchown``), one in a directory anyone can write, one of yours whose target goes through such a
link, one of yours that leads out of its directory — and must give exit 1, one line naming the link and the path it leads to, and leave the
linked directory as it was. Links you made (and root's, such as ``/tmp`` on some systems) keep
working."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.errors import ConfigError
from tests.cli.test_hostile_links import CASES, EXAMPLES, _files, _link_name, _plan

NOBODY = 65534
KINDS = ["foreign", "world-writable", "chained", "elsewhere"]
#: why each kind is refused, as the line says it
REASONS = {"foreign": "owned by user nobody", "world-writable": "which anyone can write",
           "chained": "which anyone can write", "elsewhere": "that leads out of"}


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every name under ``root`` with its bytes (None: a directory), to see nothing changed."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = None
        for f in filenames:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, root)] = Path(p).read_bytes()
    return out


def _via(tmp: Path, kind: str) -> Path:
    """A path that reaches ``tmp/real`` through an untrusted link of ``kind``."""
    if kind == "foreign":
        if os.geteuid() != 0:
            pytest.skip("giving a link to another user needs root")
        via = tmp / "via"
        via.symlink_to("real", target_is_directory=True)
        os.lchown(via, NOBODY, -1)
        return via
    if kind == "elsewhere":  # yours, in a directory only you can change, but leading out of it
        holder = tmp / "holder"
        holder.mkdir()
        (holder / "via").symlink_to(tmp / "real", target_is_directory=True)
        return holder / "via"
    shared = tmp / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # writable by anyone, no sticky bit
    (shared / "via").symlink_to("../real", target_is_directory=True)
    if kind == "world-writable":
        return shared / "via"
    (tmp / "mine").symlink_to("shared/via", target_is_directory=True)  # yours, but leads through it
    return tmp / "mine"


def _argv(line: str, target_name: str, via: Path, tmp: Path) -> list[str]:
    suffix = _link_name(line)
    name = target_name if target_name.endswith(suffix) else target_name + suffix
    return (line.replace("{link}" + suffix, str(via / name)).replace("{tmp}", str(tmp / "real"))
            .split())


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", list(CASES))
def test_a_directory_reached_through_an_untrusted_link_is_refused(
        runner: CliRunner, tmp_path: Path, case: str, kind: str) -> None:
    target_name, line = CASES[case]
    real = tmp_path / "real"
    real.mkdir()
    _files(real)
    if target_name == "plan.json":
        _plan(runner, real)
    via = _via(tmp_path, kind)
    before = _tree(real)
    res = runner.invoke(app, _argv(line, target_name, via, tmp_path))
    lines = res.stderr.splitlines()
    assert res.exit_code == 1, (res.exit_code, res.output)
    assert len(lines) == 1 and "Traceback" not in res.output, res.stderr
    assert "is a symbolic link" in lines[0], lines[0]
    assert REASONS[kind] in lines[0], lines[0]
    assert f"give the path it leads to, {real}" in lines[0], lines[0]
    assert _tree(real) == before


#: commands that read only files and succeed, run through a directory link of yours
TRUSTED = {
    "recommend": "recommend {dir}/snap.json",
    "recommend sequence": "recommend {dir}/seq.jsonl",
    "snapshot validate": "snapshot validate {dir}/snap.json",
    "recommend --broker-conf": "recommend {dir}/snap.json --broker-conf {dir}/broker.conf",
    "simulate --hosts": "simulate {dir}/snap.json --cycles 1 --hosts {dir}/hosts.yaml",
    # the plan is read, then the cluster asked (a closed port: 3)
    "apply --dry-run": "apply {dir}/plan.json --dry-run --force-stale --admin-url "
                       "http://127.0.0.1:9",
    "plans list --history": "plans list --history {dir}/dir",
    "examples --copy": "examples --copy {dir}/dir",
}


@pytest.mark.parametrize("sticky", [False, True])
@pytest.mark.parametrize("case", list(TRUSTED))
def test_a_link_of_yours_on_the_way_is_followed(runner: CliRunner, tmp_path: Path, case: str,
                                                  sticky: bool) -> None:
    """Yours, relative and leading below its directory, in a directory only you can change or in
    a sticky one like ``/tmp`` (where no one else can replace it): followed, as a checkout's
    ``examples`` link must be."""
    holder = tmp_path
    if sticky:
        holder = tmp_path / "sticky"
        holder.mkdir()
        holder.chmod(0o1777)
    real = holder / "real"
    real.mkdir()
    _files(real)
    _plan(runner, real)
    (real / "hosts.yaml").write_text("default: {idlePercent: 4}\n")
    (holder / "mine").symlink_to("real", target_is_directory=True)
    argv = TRUSTED[case].replace("{dir}", str(holder / "mine")).split()
    res = runner.invoke(app, argv)
    assert res.exit_code == (3 if case.startswith("apply") else 0), res.output
    if case == "examples --copy":
        assert any((real / "dir").iterdir())


def test_a_relative_path_through_an_untrusted_link_is_refused(
        runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk starts from the working directory for a relative path."""
    real = tmp_path / "real"
    real.mkdir()
    _files(real)
    _via(tmp_path, "world-writable")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["recommend", "shared/via/snap.json"])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1, res.output
    assert "shared/via is a symbolic link in" in res.stderr


def test_dot_dot_after_a_link_is_resolved_where_the_link_led(tmp_path: Path) -> None:
    """``mine/../x`` is ``x`` beside the link's target, as the kernel reads it: an untrusted
    link reached that way is still met and refused."""
    from lbctl.safe.files import refuse_untrusted_dirs

    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "mine").symlink_to("a/b", target_is_directory=True)
    shared = tmp_path / "a" / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "via").symlink_to(tmp_path, target_is_directory=True)
    # tmp/mine/.. is tmp/a (not tmp), so shared/via is met
    with pytest.raises(ConfigError, match="via is a symbolic link in"):
        refuse_untrusted_dirs(str(tmp_path / "mine" / ".." / "shared" / "via" / "f"),
                              error=ConfigError)
    refuse_untrusted_dirs(str(tmp_path / "mine" / ".." / "b" / "f"), error=ConfigError)


def test_a_link_loop_on_the_way_is_left_to_the_open(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    res = runner.invoke(app, ["recommend", str(tmp_path / "a" / "snap.json")])
    assert res.exit_code == 1 and res.stderr.count("\n") == 1, res.output
    assert "symbolic links" in res.stderr


def test_the_checkouts_examples_link_still_reads(runner: CliRunner) -> None:
    """The README's commands read ``examples/…``, a link in a checkout (to lbctl/examples)."""
    link = EXAMPLES.parents[1] / "examples"
    if not link.is_symlink():
        pytest.skip("not a checkout with the examples link")
    res = runner.invoke(app, ["recommend", str(link / "hot-broker.json")])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("kind", KINDS)
def test_credentials_through_an_untrusted_directory_link_are_refused(tmp_path: Path,
                                                                     kind: str) -> None:
    """Credentials may themselves be links (a Kubernetes secret volume), but the directories on
    the way are held to the same rule."""
    from lbctl.admin.auth import TokenAuth

    real = tmp_path / "real"
    real.mkdir()
    (real / "token").write_text("s3cret\n")
    via = _via(tmp_path, kind)
    with pytest.raises(Exception, match="is a symbolic link") as refused:
        TokenAuth(path=str(via / "token")).headers()
    assert "Traceback" not in str(refused.value)


@pytest.mark.parametrize("kind", ["foreign", "world-writable"])
def test_watch_history_is_not_created_under_an_untrusted_link(runner: CliRunner, tmp_path: Path,
                                                              kind: str) -> None:
    """``private_dir`` (``--history``, the journal's directory) would make the directories
    where the link leads."""
    from lbctl.safe.files import private_dir

    (tmp_path / "real").mkdir()
    via = _via(tmp_path, kind)
    with pytest.raises(ConfigError, match="is a symbolic link"):
        private_dir(str(via / "new" / "deeper"))
    assert list((tmp_path / "real").iterdir()) == []


def test_a_link_that_leads_elsewhere_is_followed_only_in_the_systems_layout(
        tmp_path: Path) -> None:
    """``/tmp`` or ``/var`` as links are the system's own (a link in ``/``): followed wherever they
    lead; the same link of yours anywhere else leads out of its directory and is refused — root
    included, for whom every link is its own. A relative link that climbs out is refused too."""
    from lbctl.safe.files import _untrusted

    (tmp_path / "real").mkdir()
    (tmp_path / "out").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "up").symlink_to("../real", target_is_directory=True)
    st = os.lstat(tmp_path / "out")
    assert _untrusted(st, "/", str(tmp_path / "real")) is None
    assert "leads out of" in (_untrusted(st, str(tmp_path), str(tmp_path / "real")) or "")
    up = os.lstat(tmp_path / "d" / "up")
    assert "leads out of" in (_untrusted(up, str(tmp_path / "d"), "../real") or "")
    assert _untrusted(up, str(tmp_path / "d"), "sub/../inside") is None
