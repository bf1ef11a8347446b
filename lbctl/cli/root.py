"""lbctl's command groups: every failure handled in one place, global flags anywhere on the line.

Typer's documented way to change a group's behaviour is a :class:`typer.core.TyperGroup` subclass
given as ``cls=``. Both overrides below are public methods of it:

* :meth:`HandlingGroup.make_context` (parsing this group's own arguments) and
  :meth:`HandlingGroup.invoke` (the callback, then the subcommand: its parsing and its body) hand
  every exception to :func:`lbctl.cli.failures.exit_status` and exit with the code it returns. It
  sits on the groups, not in ``main()``, so that ``CliRunner().invoke(app, …)`` (the tests, the
  stored outputs) goes through it as the installed command does. ``lbctl fleet`` uses it alone
  (run by spark-submit as its own program); the root adds:
* :meth:`RootGroup.parse_args`: connection options given after the subcommand are moved before it,
  so ``lbctl monitor-brokers --admin-url URL`` works as ``lbctl --admin-url URL monitor-brokers``
  (:func:`lbctl.cli.connection.hoist_global_options`), and ``-o/--output`` given before the
  subcommand is moved after it (:func:`lbctl.cli.connection.sink_output_option`), so
  ``lbctl -o json recommend`` works as ``lbctl recommend -o json``;
* :meth:`RootGroup.invoke`: while a subcommand runs, SIGTERM raises
  :class:`~lbctl.errors.Terminated` (a ``KeyboardInterrupt``) where its default action killed the
  process silently mid-write: the clean-ups of a Ctrl-C run and the command ends with one line,
  exit 130 (apply, drain, watch and sandbox install their own handler over it);
* its subcommands are built when first asked for (:class:`LazyCommands`): ``lbctl recommend``
  imports and declares ``recommend`` alone, not the ~25 commands (their modules and option
  declarations were a fifth of a small ``recommend``'s start-up); ``--help`` and completion ask
  for every command, so they build them all, each as the eager declaration would.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any, ClassVar

import typer
import typer.core

from lbctl.cli.failures import exit_status, passes_through
from lbctl.errors import Terminated, UsageError


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` inside the block, when its action is the default one
    (a process that chose to ignore it, or a caller with its own handler, keeps it) and this is
    the main thread (the only one that may set a handler); the action before is put back."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return
    signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class HandlingGroup(typer.core.TyperGroup):
    """A group whose failures become lbctl's one error line and exit code."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None,
                     **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except BaseException as e:
            if passes_through(e):
                raise
            raise typer.Exit(exit_status(e)) from None

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BaseException as e:
            if passes_through(e):
                raise
            raise typer.Exit(exit_status(e)) from None


class LazyCommands(MutableMapping[str, Any]):
    """A group's subcommands by name, in their listed order, each built by its loader the first
    time it is asked for (and kept). Iterating gives the names without building anything."""

    def __init__(self, loaders: Mapping[str, Callable[[], Any]], built: Mapping[str, Any]):
        self._loaders = dict(loaders)
        self._built = dict(built)
        self._names = list(dict.fromkeys([*loaders, *built]))

    def __getitem__(self, name: str) -> Any:
        cmd = self._built.get(name)
        if cmd is None:
            cmd = self._built[name] = self._loaders[name]()  # KeyError: no such command
        return cmd

    def __setitem__(self, name: str, cmd: Any) -> None:
        if name not in self._loaders and name not in self._built:
            self._names.append(name)
        self._built[name] = cmd

    def __delitem__(self, name: str) -> None:
        if name not in self._names:
            raise KeyError(name)
        self._names.remove(name)
        self._built.pop(name, None)
        self._loaders.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._names))

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names


class RootGroup(HandlingGroup):
    """The root group: :class:`HandlingGroup`, the connection options allowed after the
    subcommand (only the root's own long flags move — no subcommand has one of them; everything
    after ``--`` stays where it is), and its subcommands built when asked for: a subclass sets
    :attr:`lazy`."""

    #: subcommand name → what builds it, in the order ``--help`` lists them
    lazy: ClassVar[Mapping[str, Callable[[], Any]]] = {}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(self.lazy, self.commands)

    def invoke(self, ctx: Any) -> Any:
        """The subcommand, with SIGTERM raising :class:`~lbctl.errors.Terminated` where Ctrl-C
        raises ``KeyboardInterrupt`` (its one line and exit code, and the clean-ups a Ctrl-C
        runs) while it runs; a command with its own handler (apply, drain, watch, sandbox)
        installs it over this one and puts this one back."""
        with _sigterm_raises():
            return super().invoke(ctx)

    def list_commands(self, ctx: Any) -> list[str]:
        """The names, in order, without building the commands (``TyperGroup`` reads items)."""
        return list(self.commands)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        from lbctl.cli.connection import GLOBAL_FLAGS, hoist_global_options, sink_output_option

        if not GLOBAL_FLAGS:
            for p in self.params:
                for opt in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ())):
                    if opt.startswith("--") and opt not in ("--help", "--version"):
                        GLOBAL_FLAGS[opt] = not getattr(p, "is_flag", False)
        args = hoist_global_options(sink_output_option(args, GLOBAL_FLAGS), GLOBAL_FLAGS)
        self._refuse_empty_paths(args, GLOBAL_FLAGS)
        return super().parse_args(ctx, args)

    def _refuse_empty_paths(self, args: list[str], flags: dict[str, bool]) -> None:
        """Refuse an empty value for a path option of the subcommand (``--history ""``,
        ``examples --copy ""``): the path type reads ``""`` as the working directory, so a
        variable that expanded to nothing silently wrote there (``examples --copy "$DIR"``
        copied 49 files into the shell's directory). ``.`` still names it. Path options are the
        subcommand's parameters whose type is named ``path`` (a public attribute of the
        parameter types Typer gives ``Path`` annotations)."""
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] not in ("-", "--"):
            i += 2 if flags.get(args[i].split("=", 1)[0]) and "=" not in args[i] else 1
        cmd: Any = self
        while i < len(args):
            sub = getattr(cmd, "commands", None)
            if not sub or args[i] not in sub:
                break
            cmd = sub[args[i]]
            i += 1
        if cmd is self:
            return
        opts = {o for p in cmd.params if getattr(p.type, "name", None) == "path"
                for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))
                if o.startswith("-")}
        for j in range(i, len(args)):
            a = args[j]
            if a == "--":
                return
            name, eq, value = a.partition("=")
            empty = (eq and name in opts and not value) or (
                not eq and a in opts and j + 1 < len(args) and args[j + 1] == "")
            if empty:
                raise UsageError(f"{name}: an empty path names no file or directory (give . "
                                 "for the working directory)")
