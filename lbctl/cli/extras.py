"""The optional extras a command needs, checked before it does any work.

``pip install lbctl`` installs the core only (pyproject's ``dependencies``). A command that needs
an extra which is missing says so in one line, with the exact pip command, and exits 2 (a usage
error, as the fleet extra and ``--plot`` do: docs/exit-codes.md) before it reads a snapshot or
asks a cluster. Without this, ``lbctl propose`` on a core install read the snapshot, planned, and
died in the planner on ``No module named 'numpy'`` ("internal error").

The check asks :func:`importlib.util.find_spec`, which locates a module without importing it, so
the check costs no start-up time (numpy is imported only where the planner uses it).
"""

from __future__ import annotations

from collections.abc import Iterable

from lbctl.errors import UsageError

#: what lbctl's planner (``propose``, ``--strategy lbctl``, ``watch --heal``) imports; scipy, in
#: the same extra, is optional on top of it (without it the planner runs greedy and says so)
PLANNER_MODULES = ("numpy",)


def hint(extra: str) -> str:
    """The exact command that installs ``extra``."""
    return f"pip install 'lbctl[{extra}]'"


def missing(modules: Iterable[str]) -> list[str]:
    """The top-level modules of ``modules`` that cannot be found (none imported)."""
    from importlib.util import find_spec

    out = []
    for name in modules:
        try:
            found = find_spec(name) is not None
        except (ImportError, ValueError):  # a broken or half-removed install
            found = False
        if not found:
            out.append(name)
    return out


def require(what: str, extra: str, modules: Iterable[str]) -> None:
    """One line and exit 2 when a module of ``extra`` is missing: ``WHAT needs M: pip install…``."""
    gone = missing(modules)
    if gone:
        raise UsageError(f"{what} needs {', '.join(gone)}: {hint(extra)}")


def require_planner(what: str) -> None:
    """lbctl's planner needs numpy, which the ``propose`` extra brings."""
    require(what, "propose", PLANNER_MODULES)


def require_plot(flag: str = "--plot") -> None:
    """``--plot`` draws with matplotlib (the ``plot`` extra): said before the snapshot is read or
    the cluster asked, not after a simulation's cycles have run."""
    require(flag, "plot", ("matplotlib",))


def names_planner(values: Iterable[str | None]) -> bool:
    """Whether one of the ``--strategy`` values (``NAME`` or ``NAME:PLACEMENT``) is lbctl's own
    planner (:data:`lbctl.planner.PLANNER`, case and spaces aside, as the strategy parser reads
    it)."""
    from lbctl.planner import PLANNER

    return any(v is not None and v.partition(":")[0].strip().lower() == PLANNER for v in values)
