"""The one place where a failure becomes one line on stderr and an exit code.

Command bodies raise; the groups of :mod:`lbctl.cli.root` catch what they raise (and what the
CLI library raises while it parses the line) and hand it to :func:`exit_status`:

* an :class:`~lbctl.errors.LbctlError`: ``lbctl: error: <its message>``, its own code (1, or 2 for
  a usage error, 3+ for network and HTTP failures: :class:`~lbctl.errors.ExitStatus`);
* a command-line mistake the CLI library found (an unknown option, a bad or missing value; the
  vendored click's exceptions derive from the public :class:`typer.TyperException`):
  ``lbctl: error: <its message> (try 'lbctl CMD -h')``, its code (2);
* Ctrl-C: ``interrupted`` (130); SIGTERM (:class:`~lbctl.errors.Terminated`): ``terminated
  (SIGTERM)`` (130); Ctrl-C or Ctrl-D at a confirmation prompt (:class:`typer.Abort`):
  ``aborted at the prompt: nothing was sent`` (130);
* a closed pipe (``lbctl … | head``): nothing, 0;
* an :class:`OSError` naming a file (a path too long, ``--copy`` into a file): ``<path>:
  <the system's reason>`` (1); one naming none that only a write meets (the output into a full
  disk or ``/dev/full``, a quota, ``ulimit -f``): ``cannot write the output: <the reason>`` (1);
* anything else: ``internal error: <type>: <first line> (set LBCTL_TRACEBACK=1 for details)``
  (1) — never a traceback, unless ``LBCTL_TRACEBACK`` is set.

``typer.Exit`` (a command's own exit code, ``--help``, ``--version``) and click's
"no arguments: show the help" pass through untouched.
"""

from __future__ import annotations

import errno
import os
import sys

import typer

from lbctl.errors import ExitStatus, LbctlError, Terminated
from lbctl.safe.text import one_line, shorten

#: what only a write meets, and no bug of lbctl's: no space left, a quota, a file-size limit
_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def error(message: str) -> None:
    """``lbctl: error: …`` — one line, whatever the message holds: control characters (a name
    with a newline or an escape sequence) are shown escaped, and a huge one is shortened. On a
    terminal, a progress line left by the failed work is erased first (the error starts its line)."""
    from lbctl.cli import connection

    erase = "\r" + " " * 79 + "\r" if connection.is_terminal(sys.stderr) else ""
    sys.stderr.write(f"{erase}lbctl: error: {one_line(message)}\n")


def passes_through(e: BaseException) -> bool:
    """Not a failure: an exit code already chosen, or the help shown for a bare group."""
    return (isinstance(e, typer.Exit | SystemExit | GeneratorExit)
            or type(e).__name__ == "NoArgsIsHelpError")


def exit_status(e: BaseException) -> int:
    """Print ``e`` as lbctl's one error line (or nothing, for a closed pipe) and return the exit
    code it means. Re-raises with ``LBCTL_TRACEBACK`` set, for an unexpected error."""
    if isinstance(e, LbctlError):
        error(str(e) if str(e) else type(e).__name__)
        return int(e.exit_code)
    if isinstance(e, KeyboardInterrupt):
        error("terminated (SIGTERM)" if isinstance(e, Terminated) else "interrupted")
        return ExitStatus.INTERRUPTED
    if isinstance(e, typer.Abort):  # Ctrl-C or Ctrl-D at a prompt (typer.confirm)
        error("aborted at the prompt: nothing was sent")
        return ExitStatus.INTERRUPTED
    if isinstance(e, BrokenPipeError):
        return ExitStatus.SUCCESS
    if isinstance(e, typer.TyperException):  # the CLI library's: a usage error has a context
        ctx = getattr(e, "ctx", None)
        where = getattr(ctx, "command_path", None) or "lbctl"
        code = int(getattr(e, "exit_code", ExitStatus.USAGE))
        message = one_line(str(e.format_message()))
        sys.stderr.write(f"lbctl: error: {message} (try '{where} -h')\n" if ctx is not None
                         else f"lbctl: error: {message}\n")
        return code
    if os.environ.get("LBCTL_TRACEBACK"):
        raise e
    if isinstance(e, OSError) and e.filename is not None:  # the system refused a path: the
        # user's to fix (a name too long, a file where a directory goes), not an lbctl bug
        error(f"{shorten(str(e.filename), 300)}: {e.strerror or type(e).__name__}")
        return ExitStatus.ERROR
    if isinstance(e, OSError) and e.errno in _NO_ROOM:  # a write the system refused with no
        # file named: the output (stdout into a full disk, /dev/full, a quota), the user's to fix
        error(f"cannot write the output: {e.strerror or os.strerror(e.errno)}")
        return ExitStatus.ERROR
    msg = str(e).splitlines()[0] if str(e) else ""
    error(f"internal error: {type(e).__name__}: {shorten(msg, 300)} "
          "(set LBCTL_TRACEBACK=1 for details)")
    return ExitStatus.ERROR
