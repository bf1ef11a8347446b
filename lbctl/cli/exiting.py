"""Leaving the process without freeing a large result object by object.

A one-shot command over a large snapshot ends holding every bundle's records: at 1,000,000 bundles
freeing them one at a time costs 0.12 CPU-s (a tenth of parsing the file, issue 30, item 5), work
the operating system does anyway, at once, when the process ends. A command that built such a
result hands it to :func:`keep_until_exit`; :func:`exit_without_freeing` (called by
:func:`lbctl.cli.app.main` once the command has succeeded) flushes the standard streams and ends
the process there, the way compilers skip their own frees at exit (clang's ``-disable-free``).

lbctl registers no ``atexit`` handler and no click close callback, and every file a command writes
is closed when the command returns, so nothing else is skipped. Anything that goes wrong (a failed
command, a stream that cannot be flushed) takes the ordinary exit.
"""

from __future__ import annotations

import os
import sys

#: a result over this many bundles or more is worth not freeing
KEEP_FROM = 100_000

#: what the command asked to keep alive until the process ends
_KEPT: list[object] = []
#: set by :func:`armed` around the process's one command (never by a test's in-process runner,
#: which would otherwise keep every large result for the rest of its session)
_ARMED: list[bool] = [False]


def arm() -> None:
    """This process ends when its command returns: a large result may be kept until then."""
    _ARMED[0] = True


def keep_until_exit(bundles: int, *objects: object) -> None:
    """Keep ``objects`` (the command's result over ``bundles`` bundles) alive until the process
    ends, when they are many enough to make freeing them one by one worth skipping and the
    process was :func:`arm`-ed."""
    if _ARMED[0] and bundles >= KEEP_FROM:
        _KEPT.extend(objects)


def exit_without_freeing(code: object) -> None:
    """End the process now with status 0 when the command succeeded (``code`` 0 or ``None``) and
    kept a large result, after flushing stdout and stderr; otherwise return (the caller exits
    the ordinary way)."""
    if not _KEPT or code not in (0, None):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # the ordinary exit reports it
    os._exit(0)
