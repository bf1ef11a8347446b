"""`lbctl examples`: the example snapshots shipped inside the package, listed or copied out.

They live in ``lbctl/examples/`` (package data, so a ``pip install`` has them; the repository
root's ``examples`` is a link to the same directory). ``--copy DIR`` writes them to ``DIR`` so
that the README's commands (``lbctl recommend examples/hot-broker.json``) work as written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from lbctl.cli.common import Shown
from lbctl.cli.groups import grouped

SNAPSHOT_SUFFIXES = (".json", ".yaml", ".yml", ".jsonl", ".gz")


def examples_dir() -> Path:
    """Where the installed examples are."""
    from importlib.resources import files

    return Path(str(files("lbctl") / "examples"))


def example_files(root: Path) -> list[Path]:
    """The snapshot files under ``root`` (the fleet corpus, one file per sample, is left out of
    the list but copied)."""
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in SNAPSHOT_SUFFIXES
                  and "fleet" not in p.relative_to(root).parts)


def describe(root: Path) -> list[dict[str, Any]]:
    from lbctl.sources.snapshot import read_snapshot_file, summarize

    out = []
    for p in example_files(root):
        states = read_snapshot_file(p)
        s = summarize(states[-1])
        out.append({"file": str(p.relative_to(root)),
                    "kind": "sequence" if len(states) > 1 else "snapshot",
                    "cluster": s["cluster"], "snapshots": len(states), "brokers": s["brokers"],
                    "bundles": s["bundles"], "loadManager": s["loadManager"]})
    return out


def copy_examples(root: Path, dest: Path) -> int:
    """Copy every file under ``root`` to ``dest``; an existing different file is an error (never
    overwritten). Returns the number of files written.

    What is at ``dest`` is read as any input is (a FIFO there would block the comparison
    forever) and a symbolic link there is refused, not followed (a dangling one would have had
    the copy written wherever it points); each file is written atomically, mode 0644. ``dest``
    is checked once and held by descriptor (:func:`lbctl.safe.files.open_dir`): every file is
    read, created and renamed relative to it, so the directory written in is the one checked."""
    import os

    from lbctl.errors import LbctlError
    from lbctl.safe.files import HeldDir, atomic_write, open_dir, read_regular, refuse_link

    def refused(m: str) -> LbctlError:
        return LbctlError(f"{m}; nothing was copied")

    refuse_link(dest, error=refused)
    held: HeldDir | None = open_dir(dest, error=refused) if os.path.lexists(dest) else None

    def existing(rel: Path) -> bytes | None:
        if held is None:
            return None
        sub = held
        try:
            if rel.parent != Path("."):  # a linked or missing sub-directory
                try:
                    sub = open_dir(str(rel.parent), error=refused, at=held)
                except LbctlError as e:
                    if "no such directory" in str(e):
                        return None
                    raise
            try:
                os.lstat(rel.name, dir_fd=sub.fd)
            except FileNotFoundError:
                return None
            return read_regular(rel.name, what="a copy of the example", error=refused, at=sub)
        finally:
            if sub is not held:
                sub.close()

    try:
        files = [p for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
        there = {p: existing(p.relative_to(root)) for p in files}
        clash = [dest / p.relative_to(root) for p in files
                 if there[p] is not None and there[p] != p.read_bytes()]
        if clash:
            raise LbctlError(f"{clash[0]} exists and differs from the example; nothing was "
                             "copied (choose another directory)")
        written = 0
        for p in files:
            if there[p] is not None:
                continue
            if held is None:
                held = open_dir(dest, error=LbctlError, make=0o777)
            rel = p.relative_to(root)
            with open_dir(str(rel.parent), error=LbctlError, make=0o777, at=held) as sub:
                atomic_write(rel.name, p.read_bytes(), error=LbctlError, mode=0o644, at=sub)
            written += 1
        return written
    finally:
        if held is not None:
            held.close()


def _is_root(dest: Path, root: Path) -> bool:
    """Whether ``dest`` is the installed examples directory itself (directly, or through a link
    such as a checkout's ``examples``): copying it onto itself writes nothing. Only ``stat`` is
    asked; a dangling link or a missing directory is not it."""
    import os

    try:
        return os.path.samefile(dest, root)
    except OSError:
        return False


@grouped
def examples(
    *,
    copy: Annotated[Path | None, typer.Option(
        "--copy", metavar="DIR", help="Copy the examples into DIR (created if needed; an "
        "existing different file stops the copy).")] = None,
    path: Annotated[bool, typer.Option(
        "--path", help="Print only the directory the examples are installed in.")] = False,
    shown: Shown,
) -> None:
    """List the example snapshots shipped with lbctl, or copy them out.

    \b
    Examples:
      lbctl examples
      lbctl examples --copy examples && lbctl recommend examples/hot-broker.json
      lbctl recommend "$(lbctl examples --path)/hot-broker.json"
    """
    from lbctl.render.views import ExamplesView

    if path and copy is not None:
        from lbctl.errors import UsageError

        raise UsageError("give --path or --copy, not both")  # --copy was silently not done
    root = examples_dir()
    if not root.is_dir():
        from lbctl.errors import LbctlError

        raise LbctlError(f"the examples are not installed ({root} is missing)")
    if path:
        print(root)
        return
    if copy is not None:
        if copy.exists() and not copy.is_dir():  # it said "DIR: File exists"
            from lbctl.errors import LbctlError

            raise LbctlError(f"{copy}: not a directory; nothing was copied")
        if _is_root(copy, root):
            # a checkout's ``examples`` is a link to lbctl/examples: README's first command
            # (``--copy examples``) there has nothing to do, and the link is not written through
            sys.stderr.write(f"lbctl: {copy} is the bundled examples directory itself; nothing "
                             f"to copy (try: lbctl recommend {copy / 'hot-broker.json'})\n")
            return
        n = copy_examples(root, copy)
        from lbctl.safe.text import one_line

        # a second copy said "copied 0 file(s)" and no more: say the files are there (walk21)
        total = sum(1 for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
        kept = f"; {total - n} already there, the same" if total > n else ""
        # the directory as given may hold an escape sequence: shown escaped (hostile14)
        sys.stderr.write(one_line(f"lbctl: copied {n} file(s) to {copy}{kept} "
                                  f"(try: lbctl recommend {copy / 'hot-broker.json'})") + "\n")
        return
    shown.emit(ExamplesView(str(root), describe(root)))
