"""Reading and writing files safely: regular files only, bounded sizes, private and crash-safe writes.

Every file lbctl reads on a user's word (snapshots, ``broker.conf``, ``client.conf``, token and key
files) is opened through :func:`read_regular`:

* **never through a symbolic link** (``O_NOFOLLOW``): lbctl reads and writes no file through a
  link, so a link planted where a snapshot, a plan, a journal or a history file is expected cannot
  make it read (or, for a writer, replace) another file; :func:`link_message` says so in one line
  and names the link's target, which the user may give instead. Credentials are the exception
  (``follow=True``): a Kubernetes secret volume mounts each key as a link into ``..data``, and
  they are only ever read;
* **no untrusted link on the way** (:func:`refuse_untrusted_dirs`): a directory on the path may be
  reached through a link only when the link is yours or root's and sits in a directory no one else
  can change (not writable by others, or sticky like ``/tmp``), so ``/tmp`` or ``/var`` being
  system links and a checkout's ``examples -> lbctl/examples`` keep working while a link another
  user planted, or could swap, is refused in one line;
* **regular files only** (or ``-`` where a command reads stdin): a FIFO would block the open or the
  read forever and ``/dev/zero`` never ends. The file is opened with ``O_NONBLOCK`` — a FIFO's open
  returns at once — and ``fstat`` decides before a byte is read;
* **bounded**: at most :data:`LIMITS` ``.max_input_bytes`` (1 GiB unless ``--max-input-size``
  raises it), decompressed size included (:func:`gunzip_limited` stops a gzip bomb after the limit,
  not after 4 GB).

Writes never follow a symbolic link (a link planted where lbctl writes — the lock, the journal,
a history, a log in ``$TMPDIR`` — would otherwise truncate or append to its target):

* :func:`open_private` is the one way lbctl opens a file it writes in place: ``O_NOFOLLOW`` on
  every open, ``O_CREAT | O_EXCL`` when the name is created (so a name that appears meanwhile is
  never taken over), regular files only, mode ``0600``;
* :func:`atomic_write` builds the file under an anonymous ``O_TMPFILE`` inode (a ``kill -9`` leaves
  nothing behind) and renames it over the target, with mode ``0600``;
* :func:`append_record` appends one record to a history file (``.jsonl``, ``.jsonl.gz``, the
  journal) so that the file is never left corrupt: an exclusive ``flock`` serialises concurrent
  appenders, a partial last record left by a crash is cut off first (and reported), a failed write
  (``ENOSPC``) is rolled back with ``ftruncate``, and the record is ``fsync``-ed;
* :func:`private_dir` creates directories ``0700``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from lbctl.errors import ConfigError, ExitStatus, LbctlError, UsageError

GIB = 1 << 30
MIB = 1 << 20
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


@dataclass
class Limits:
    """Process-wide resource bounds, set once from the root command's flags."""

    #: bytes of one input file after decompression (``--max-input-size``)
    max_input_bytes: int = GIB
    #: bytes of one HTTP response body (``--max-response-size``)
    max_response_bytes: int = 256 * MIB


LIMITS = Limits()

ErrorFactory = Callable[[str], LbctlError]


def parse_size(text: str, flag: str) -> int:
    """``512M``, ``2G``, ``1.5GiB``, ``100000`` → bytes (powers of 1024). Only flags take sizes,
    so a bad one is a usage error (exit 2, docs/exit-codes.md: 'bad flag')."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", text)
    if m is None:
        raise UsageError(f"{flag}: expected a size like 512M or 2G, got {text[:40]!r}")
    scale = {"": 1, "k": 1 << 10, "m": MIB, "g": GIB, "t": 1 << 40}[m[2].lower()]
    value = int(float(m[1]) * scale)
    if value < 1024:
        raise UsageError(f"{flag}: at least 1K, got {text[:40]!r}")
    return value


def human_size(n: int) -> str:
    for unit, size in (("GiB", GIB), ("MiB", MIB), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} bytes"


def _describe(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device"
    if stat.S_ISSOCK(mode):
        return "is a socket"
    return "is not a regular file"


def _regular(fd: int, name: str, *, what: str, error: ErrorFactory) -> int:
    """``fd`` once ``fstat`` says it is a regular file, made blocking again (it was opened with
    ``O_NONBLOCK`` so that a FIFO could not hang the open); else closed and refused in one line."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{name}: {_describe(st.st_mode)} (expected {what})")
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


#: links followed on the way to one name at most (Linux's own limit is 40)
_MAX_HOPS = 40


def _owner(uid: int) -> str:
    try:
        import pwd

        return f"user {pwd.getpwuid(uid).pw_name}"
    except (ImportError, KeyError, OverflowError):
        return f"uid {uid}"


def _untrusted(link_st: os.stat_result, holder: str, target: str,
               mode: int | None = None) -> str | None:
    """Why the link (``lstat`` ``link_st``, pointing at ``target``) in the directory ``holder``
    (whose ``st_mode`` is ``mode``: the walk's descriptor's, so that the directory judged is the
    one walked; None: ``stat`` it by name) may not be followed, or None when it may.

    It must belong to you or to root and sit in a directory that others cannot change (not
    writable by others, or sticky like ``/tmp``, where only a link's owner can replace it). And it
    must be part of the system's layout or stay where it is: a link in ``/`` itself (``/tmp``,
    ``/var``, ``/bin`` on merged-usr systems), a relative link that leads below the directory
    holding it (a checkout's ``examples -> lbctl/examples``), or, when you are not root, one of
    root's (a home directory the administrator moved to another disk). A link of yours that leads
    elsewhere (``snaps -> /etc``) is one lbctl does not follow: the rule is that lbctl reads and
    writes no file through a link, and these are the only exceptions, so that root, for whom
    every link is its own, is held to it too."""
    me = os.geteuid()
    if link_st.st_uid not in (0, me):
        return f"owned by {_owner(link_st.st_uid)}"
    if mode is None:
        try:
            mode = os.stat(holder).st_mode
        except (OSError, ValueError):
            return None  # unreadable: the open that follows says so
    if mode & stat.S_IWOTH and not mode & stat.S_ISVTX:
        return f"in {holder}, which anyone can write"
    if holder == "/" or (link_st.st_uid == 0 and me != 0):
        return None
    if not target.startswith("/"):
        inside = os.path.normpath(target)
        if inside != ".." and not inside.startswith("../") and inside != ".":
            return None
    return f"that leads out of {holder} (to {target})"


def refuse_untrusted_dirs(path: str | os.PathLike[str], *, error: ErrorFactory) -> None:
    """Refuse ``path`` when a directory on the way to its last component is reached through a
    symbolic link that someone else could have planted or could swap (:func:`_untrusted`): the
    walk of :func:`open_parent`, for a caller that opens nothing there itself (a directory lbctl
    will create, ``--out``, ``--history``). Links that the system or you made stay working:
    ``/tmp`` or ``/var`` being links (root's), a checkout's ``examples -> lbctl/examples``
    (yours), a home directory moved to another disk. The last component is not walked: it is the
    caller's. A missing or unreadable component ends the walk; the open that follows reports it."""
    try:
        fd, _ = open_parent(path, error=error)
    except (OSError, ValueError):
        return
    if fd is not None:
        os.close(fd)


_DIR_FLAGS = (getattr(os, "O_PATH", 0) or os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW | _CLOEXEC


def _refused_link(name: str, step: str, reason: str, error: ErrorFactory) -> LbctlError:
    resolved = os.path.join(_realpath(os.path.dirname(name)), os.path.basename(name))
    e = error(f"{name}: {step} is a symbolic link {reason} (lbctl follows a link on "
              f"the way to a file only when it is part of the system's layout or stays "
              f"where it is, and no one else can replace it); give the path it leads "
              f"to, {resolved}, if that is the one")
    e.exit_code = ExitStatus.ERROR
    return e


def open_parent(path: str | os.PathLike[str], *, error: ErrorFactory, make: int | None = None,
                at: HeldDir | None = None) -> tuple[int | None, str]:
    """A descriptor of the directory holding ``path``'s last component, and that component:
    the one walk behind every open, create and rename lbctl does (``dir_fd=`` with the result).

    The directories are opened one at a time, each relative to the one before and never through
    a link (``O_NOFOLLOW``); a link met on the way is read (``readlink``), judged by
    :func:`_untrusted` against the directory that holds it (the descriptor already open, so the
    directory judged is the one the walk is in), and its target walked the same way. A link
    swapped in after it was judged is never followed: nothing is reopened by name. ``..`` goes up
    from the directory reached, as the kernel's does. Returns None for the descriptor when the
    path has no directory part (the working directory's ``AT_FDCWD``); the caller closes the
    other. A missing or unusable component raises the ``OSError`` an open by name would
    (``ENOENT``, ``ENOTDIR``, ``EACCES``, ``ELOOP`` after :data:`_MAX_HOPS` links); an untrusted
    link raises ``error`` in one line, exit 1.

    ``make`` (a mode): a directory of ``path`` that is missing is created, with ``os.mkdir``
    relative to the descriptor of the one holding it (so it is made in the directory the walk
    judged, never where a link swapped in meanwhile leads), and then walked like the others. Only
    the path's own components are created, never a link's missing target (``mkdir`` would not
    follow a dangling link either). ``at``: a relative ``path`` is walked from that held
    directory (:func:`open_dir`) instead of the working directory."""
    name = os.fspath(path)
    head, last = os.path.split(name)
    relative_to = at if at is not None and not name.startswith("/") else None
    if (not head and relative_to is None) or os.sep != "/" or not hasattr(os, "geteuid"):
        return None, name
    if not last:  # "dir/": the directory itself
        last = "."
    if relative_to is not None:
        where = relative_to.path
        fd = os.open(".", _DIR_FLAGS, dir_fd=relative_to.fd)
    else:
        where = "/" if head.startswith("/") else _cwd()
        fd = os.open(where if where == "/" else ".", _DIR_FLAGS)
    pending = [(p, True) for p in reversed(head.split("/")) if p and p != "."]
    hops = made = 0
    part = ""
    try:
        while pending:
            part, own = pending.pop()
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if make is None or not own or part == ".." or made > _MAX_HOPS:
                    raise
                made += 1  # bounded: a directory removed as fast as it is made
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, make, dir_fd=fd)
                pending.append((part, own))
                continue
            except OSError as e:
                if e.errno not in (errno.ELOOP, errno.ENOTDIR):
                    raise
                st = os.lstat(part, dir_fd=fd)
                if not stat.S_ISLNK(st.st_mode):
                    raise
                hops += 1
                if hops > _MAX_HOPS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), name) from None
                target = os.readlink(part, dir_fd=fd)
                reason = _untrusted(st, where, target, os.fstat(fd).st_mode)
                if reason is not None:
                    raise _refused_link(name, os.path.join(where, part), reason, error) from None
                if target.startswith("/"):
                    os.close(fd)
                    fd, where = -1, "/"
                    fd = os.open("/", _DIR_FLAGS)
                pending.extend((p, False) for p in reversed(target.split("/")) if p and p != ".")
                continue
            os.close(fd)
            fd = nxt
            where = os.path.dirname(where) if part == ".." else os.path.join(where, part)
    except BaseException as e:
        if fd >= 0:
            os.close(fd)
        if isinstance(e, OSError) and part and e.filename == part:
            # the system names the component opened relative to a descriptor ("h: Read-only
            # file system"): the message names the directory the walk was in, not a bare name
            e.filename = os.path.join(where, part)
        raise
    return fd, last


def _open_at(path: str, flags: int, mode: int, *, error: ErrorFactory,
             at: HeldDir | None = None) -> int:
    """``os.open(path, flags, mode)`` with the directories walked by :func:`open_parent` and the
    last component opened relative to the last of them (so ``O_NOFOLLOW`` in ``flags`` holds for
    it, and no directory on the way can be swapped for a link meanwhile)."""
    dfd, last = open_parent(path, error=error, at=at)
    try:
        return os.open(last, flags, mode, dir_fd=dfd)
    except OSError as e:
        if dfd is not None and e.filename == last:  # (named as given, not by its last part)
            e.filename = at.join(os.fspath(path)) if at is not None else os.fspath(path)
        raise
    finally:
        if dfd is not None:
            os.close(dfd)


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return "."


def _realpath(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return "?"


def link_message(path: str) -> str:
    """The one line for a symbolic link where lbctl reads or writes, naming its target (which the
    user can give instead, when that is what they meant)."""
    try:
        target = os.path.realpath(path)
    except (OSError, ValueError):
        target = "?"
    return (f"{path}: is a symbolic link (lbctl reads and writes no file through a link; "
            f"give the path it points to, {target}, if that is the one)")


def link_refused(path: str, error: ErrorFactory) -> LbctlError:
    """The caller's error for a link at ``path`` (so that whoever catches that kind still does),
    with exit code 1 whatever the kind's own: a link is a bad input file for every command alike
    (docs/exit-codes.md), not a usage error for some and a file error for others."""
    e = error(link_message(path))
    e.exit_code = ExitStatus.ERROR
    return e


def refuse_link(path: str | os.PathLike[str], *, error: ErrorFactory) -> None:
    """Refuse ``path`` when its last component is a symbolic link (dangling or not): for a
    directory lbctl reads or writes in (``fleet ingest`` inputs, ``--out``, ``--history``,
    ``examples --copy``) and a file it replaces by renaming (``-f``), where ``O_NOFOLLOW`` cannot
    ask for it. A name too long or otherwise unusable is left to the open that follows."""
    name = os.fspath(path)
    refuse_untrusted_dirs(name, error=error)
    try:
        is_link = stat.S_ISLNK(os.lstat(name).st_mode)
    except (OSError, ValueError):
        return
    if is_link:
        raise link_refused(name, error)


def refuse_unwritable(path: str | os.PathLike[str], *, what: str, error: ErrorFactory) -> None:
    """Refuse, before any work, a name lbctl will write that is a link (:func:`refuse_link`) or
    something other than a regular file (a directory, a FIFO, a device): the command would
    otherwise read the whole cluster first and fail only when it came to write. A missing name
    is fine (it is created)."""
    name = os.fspath(path)
    refuse_link(name, error=error)
    try:
        mode = os.stat(name).st_mode
    except (OSError, ValueError):
        return
    if not stat.S_ISREG(mode):
        e = error(f"{name}: {_describe(mode)} (expected {what})")
        e.exit_code = ExitStatus.ERROR
        raise e


def open_regular(path: str, *, what: str, error: ErrorFactory = ConfigError,
                 follow: bool = False, at: HeldDir | None = None) -> int:
    """A file descriptor of ``path`` opened for reading, after checking it is a regular file.

    ``what`` ends the message (``expected {what}``). The open never blocks (``O_NONBLOCK``) and
    never follows a symbolic link unless ``follow`` (credentials only: see the module docstring).
    ``at``: ``path`` is relative to that held directory (:func:`open_dir`); messages name the
    whole path.
    """
    rel, path = path, (at.join(path) if at is not None else path)
    flags = os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW)
    try:
        fd = _open_at(rel, flags, 0, error=error, at=at)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory (expected {what})") from None
    except PermissionError:
        raise error(f"{path}: permission denied") from None
    except OSError as e:
        if e.errno == errno.ELOOP and not follow and os.path.islink(path):
            raise link_refused(path, error) from None
        raise error(f"{path}: cannot open: {e.strerror or e}") from None
    return _regular(fd, path, what=what, error=error)


def read_regular(path: str, *, what: str, error: ErrorFactory = ConfigError,
                 limit: int | None = None, follow: bool = False,
                 at: HeldDir | None = None, max_line: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` (default
    :data:`LIMITS`.max_input_bytes); ``follow``, ``at``: as :func:`open_regular`.

    ``max_line`` (a JSON-lines file): no line may be longer. A file larger than that is first
    scanned a chunk at a time, so one giant line is refused without the file being held
    (:class:`LineCheck`); a smaller file cannot hold such a line and is read at once."""
    cap = LIMITS.max_input_bytes if limit is None else limit
    fd = open_regular(path, what=what, error=error, follow=follow, at=at)
    path = at.join(path) if at is not None else path
    if max_line is not None:
        try:
            _scan_lines(fd, path, max_line, cap, error)
        except BaseException:
            os.close(fd)
            raise
    try:
        with os.fdopen(fd, "rb") as f:
            # sized by the file, not the cap: a read of cap + 1 bytes allocated the whole cap
            # (1 GiB) for a small file's (a gzip file's) few bytes
            want = min(cap, os.fstat(f.fileno()).st_size) + 1
            data = f.read(want)
            if len(data) == want <= cap:  # it grew since: read on, up to the cap
                data += f.read(cap + 1 - want)
    except OSError as e:
        raise error(f"{path}: cannot read: {e.strerror or e}") from None
    if len(data) > cap:
        raise error(too_large(path, cap, adjustable=limit is None))
    return data


def read_if_present(path: str | os.PathLike[str], *, what: str, error: ErrorFactory,
                    limit: int | None = None) -> bytes | None:
    """:func:`read_regular` of a state file that may not exist yet (None then): watch's anomaly
    state and webhook queues. Anything at the name counts as there, a dangling link included,
    so that a link or a FIFO planted at it is one line (:func:`open_regular`), never followed,
    never waited on, and never mistaken for a fresh start."""
    name = os.fspath(path)
    if not os.path.lexists(name):
        return None
    return read_regular(name, what=what, error=error, limit=limit)


#: the least :func:`max_line_bytes` is, whatever ``--max-input-size`` says
LINE_FLOOR = 128 * MIB
_GZ_STEP = _CHUNK  # bytes inflated per step by gunzip_limited (zlib holds a step twice)


def max_line_bytes() -> int:
    """The longest line a JSON-lines input (a snapshot sequence, a history) may hold: an eighth
    of ``--max-input-size``, at least :data:`LINE_FLOOR` (128 MiB by default, a snapshot of
    over 100,000 bundles). Without it a file of one giant line under the input limit was held
    whole, then copied and decoded (200 MB: 0.8 GB of memory, and 28 s in the streamed
    replay, hostile20) only to be refused as a snapshot."""
    return max(LIMITS.max_input_bytes // 8, LINE_FLOOR)


def line_too_long(name: str, number: int, cap: int) -> str:
    """The one line for line ``number`` of ``name`` longer than ``cap`` bytes."""
    return (f"{name}:{number}: a line longer than {human_size(cap)} (the limit for one line of "
            "a sequence, an eighth of the input size limit; raise it with --max-input-size)")


class LineCheck:
    """Lines counted across the chunks of a file, refusing the first one longer than ``cap``
    (its number in :func:`line_too_long`'s message) as soon as it is seen: nothing of it needs
    to be kept."""

    def __init__(self, name: str, cap: int, error: ErrorFactory) -> None:
        self.name = name
        self.cap = cap
        self.error = error
        self.run = 0  # bytes of the current line so far
        self.number = 1  # the current line's number

    def feed(self, chunk: bytes) -> None:
        if len(chunk) <= self.cap:  # the lines inside it are shorter than the cap
            first = chunk.find(b"\n")
            if first < 0:
                self.run += len(chunk)
            else:
                self._check(self.run + first)
                self.number += chunk.count(b"\n")
                self.run = len(chunk) - chunk.rfind(b"\n") - 1
            self._check(self.run)
            return
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._check(self.run + end - start)
            self.run = 0
            self.number += 1
            start = end + 1
        self.run += len(chunk) - start
        self._check(self.run)

    def _check(self, length: int) -> None:
        if length > self.cap:
            e = self.error(line_too_long(self.name, self.number, self.cap))
            e.exit_code = ExitStatus.ERROR
            raise e


def _scan_lines(fd: int, name: str, max_line: int, cap: int, error: ErrorFactory) -> None:
    """:func:`read_regular`'s scan of a file larger than ``max_line`` (at most ``cap`` bytes
    read), then back to its start."""
    try:
        if os.fstat(fd).st_size <= max_line:
            return
        check = LineCheck(name, max_line, error)
        total = 0
        while total <= cap and (chunk := os.read(fd, _CHUNK)):
            total += len(chunk)
            check.feed(chunk)
        os.lseek(fd, 0, os.SEEK_SET)
    except OSError as e:
        raise error(f"{name}: cannot read: {e.strerror or e}") from None


def read_stream(stream: object, name: str, *, error: ErrorFactory) -> bytes:
    """Bytes from a binary stream (stdin), bounded like a file. A closed stdin is an error."""
    cap = LIMITS.max_input_bytes
    reader = getattr(stream, "read", None)
    if reader is None:
        raise error(f"{name}: standard input is closed")
    try:
        data: bytes = reader(cap + 1)
    except (OSError, ValueError) as e:
        raise error(f"{name}: cannot read standard input ({getattr(e, 'strerror', None) or e})") from None
    if len(data) > cap:
        raise error(too_large(name, cap))
    return data


def too_large(name: str, cap: int, *, adjustable: bool = True) -> str:
    """The one line for an input over its cap; ``adjustable``: the cap is ``--max-input-size``'s
    (a fixed cap, such as a conf file's, names no flag that would not raise it)."""
    if not adjustable:
        return f"{name}: larger than {human_size(cap)} (the limit for such a file)"
    return (f"{name}: larger than {human_size(cap)} (the input size limit; raise it with "
            "--max-input-size)")


def gunzip_limited(data: bytes, name: str, *, error: ErrorFactory, limit: int | None = None,
                   cut_ok: bool = False, max_line: int | None = None) -> bytes:
    """Decompress every gzip member of ``data``, stopping as soon as the output passes ``limit``.

    ``cut_ok`` (a JSON-lines history, appended one member at a time): data cut short at the end —
    an append interrupted by a crash — gives what decompressed before the cut, with a warning,
    when that holds a whole line; the reader then leaves out a partial last line. ``max_line``:
    as :func:`read_regular`'s, checked as the data inflates."""
    cap = LIMITS.max_input_bytes if limit is None else limit
    lines = LineCheck(name, max_line, error) if max_line is not None else None
    out = bytearray()
    rest = data
    while rest:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        tail = rest
        while True:  # a step at a time: a line too long is refused before it is all inflated
            try:
                piece = d.decompress(tail, min(_GZ_STEP, cap + 1 - len(out)))
            except zlib.error as e:
                raise error(f"{name}: bad gzip data: {e}") from None
            out += piece
            if lines is not None:
                lines.feed(piece)
            tail = d.unconsumed_tail
            if len(out) > cap or not tail or d.eof:
                break
        if len(out) > cap or d.unconsumed_tail:
            raise error(too_large(name, cap) + " (decompressed)")
        if not d.eof:
            if cut_ok and b"\n" in out:
                warn(f"{name}: {CUT_GZIP}")
                return bytes(out)
            raise error(f"{name}: bad gzip data: the compressed data is truncated")
        rest = d.unused_data
        if rest and not rest.startswith(GZIP_MAGIC):
            if rest.strip(b"\x00"):
                raise error(f"{name}: bad gzip data: trailing garbage after the last member")
            break
    return bytes(out)


#: the warning for a history whose gzip data ends cut short (:func:`gunzip_limited` ``cut_ok``)
CUT_GZIP = ("the compressed data is cut short at the end (an append was interrupted); what "
            "precedes the cut is read")


# --------------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------------
def private_dir(directory: str, *, error: ErrorFactory = ConfigError, mode: int = 0o700) -> None:
    """Create ``directory`` (and parents) with ``mode`` (0700: private) when missing; never under
    a link that :func:`refuse_untrusted_dirs` refuses (the directories would be made where it
    leads). Each missing component is made relative to a descriptor of the directory holding it
    (:func:`open_parent` ``make``), not by path, so a directory swapped for a link while they are
    made cannot send the rest elsewhere."""
    if not directory:
        return
    # an OSError (a file in the way, permission denied) goes to the caller, as os.makedirs's did
    dfd, _ = open_parent(os.path.join(directory, ""), error=error, make=mode)
    if dfd is not None:
        os.close(dfd)


class HeldDir:
    """A directory checked once and held open by descriptor (an ``O_PATH`` one): the files a
    command writes in an ``--out``, a ``--history`` or an ``examples --copy`` directory are then
    opened, created and renamed relative to it (``at=``), so the directory written in is the one
    checked, whatever is renamed or swapped for a link by its name meanwhile. A context manager
    that closes the descriptor."""

    __slots__ = ("fd", "path")

    def __init__(self, fd: int, path: str) -> None:
        self.fd = fd
        self.path = path

    def join(self, name: str) -> str:
        """The name shown for ``name`` inside this directory (messages say the whole path)."""
        return os.path.join(self.path, name)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> HeldDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_dir(directory: str | os.PathLike[str], *, error: ErrorFactory,
             make: int | None = None, at: HeldDir | None = None) -> HeldDir:
    """The directory ``directory``, walked by :func:`open_parent` (its links judged by the same
    rule) and held open (:class:`HeldDir`); the directory itself may not be a symbolic link
    (refused in one line, as :func:`refuse_link`). ``make`` (a mode): it and its missing parents
    are created, each relative to its parent's descriptor. A missing directory (without
    ``make``), a file in its place or an unusable path is ``error`` in one line. ``at``: a
    relative ``directory`` is inside that held one."""
    rel = os.fspath(directory)
    name = at.join(rel) if at is not None else rel
    try:
        bare = rel.rstrip("/")
        if not bare:
            return HeldDir(os.open("/", _DIR_FLAGS), name)
        dfd, last = open_parent(bare, error=error, make=make, at=at)
        try:
            for _ in range(8):
                try:
                    return HeldDir(os.open(last, _DIR_FLAGS, dir_fd=dfd), name)
                except FileNotFoundError:
                    if make is None:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(last, make, dir_fd=dfd)
            raise OSError(errno.ENOENT, "it keeps disappearing")
        finally:
            if dfd is not None:
                os.close(dfd)
    except OSError as e:
        if e.errno == errno.ELOOP or (e.errno == errno.ENOTDIR and os.path.islink(name)):
            raise link_refused(name, error) from None
        if isinstance(e, FileNotFoundError):
            raise error(f"{name}: no such directory") from None
        if e.errno == errno.ENOTDIR or isinstance(e, FileExistsError):
            raise error(f"{name}: Not a directory") from None  # the system's words, as before
        if isinstance(e, PermissionError):
            raise error(f"{name}: permission denied") from None
        raise error(f"{name}: cannot open the directory: {e.strerror or e}") from None


def open_private(name: str, *, error: ErrorFactory, new: bool = False, append: bool = False,
                 mode: int = 0o600, what: str = "a regular file to write",
                 at: HeldDir | None = None) -> tuple[int, bool]:
    """A read-write descriptor of the regular file ``name`` and whether this call created it.

    The name is created exclusively (``O_CREAT | O_EXCL``, ``mode``) when missing; an existing
    one is opened only when ``new`` is false, and never through a symbolic link
    (``O_NOFOLLOW``): a link, a FIFO, a device or a directory is refused with one line. The open
    never blocks (``O_NONBLOCK``, cleared once ``fstat`` says it is a regular file). ``at``:
    ``name`` is relative to that held directory (:func:`open_dir`); messages name the whole
    path."""
    rel, name = name, (at.join(name) if at is not None else name)
    base = os.O_RDWR | os.O_NONBLOCK | _NOFOLLOW | _CLOEXEC | (os.O_APPEND if append else 0)
    fd = -1
    created = False
    dfd: int | None = None
    try:
        dfd, last = open_parent(rel, error=error, at=at)
        for _ in range(8):  # a name removed between the two opens: create it after all
            try:
                fd = os.open(last, base | os.O_CREAT | os.O_EXCL, mode, dir_fd=dfd)
                created = True
                break
            except FileExistsError:
                if new:
                    raise error(f"{name}: already exists (lbctl creates it, and takes over no "
                                "existing file)") from None
            try:
                fd = os.open(last, base, dir_fd=dfd)
                break
            except FileNotFoundError:
                continue
        if fd < 0:
            raise error(f"{name}: cannot open: it keeps disappearing")
    except OSError as e:
        if e.errno == errno.ELOOP or (os.path.islink(name) and not isinstance(e, IsADirectoryError)):
            raise link_refused(name, error) from None
        if isinstance(e, IsADirectoryError):
            raise error(f"{name}: is a directory (expected {what})") from None
        if isinstance(e, PermissionError):
            raise error(f"{name}: permission denied") from None
        raise error(f"{name}: cannot open: {e.strerror or e}") from None
    finally:
        if dfd is not None:
            os.close(dfd)
    return _regular(fd, name, what=what, error=error), created


def _fsync_dir(directory: str) -> None:
    with contextlib.suppress(OSError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _replace_target(rel: str, name: str, *, error: ErrorFactory,
                    at: HeldDir | None) -> tuple[int, str]:
    """A descriptor of the directory of a file about to be replaced by renaming (the working
    directory's when ``rel`` has none) and its last component, refusing a symbolic link there
    (a rename would replace the link, not write where it leads). The caller closes the
    descriptor; on an error raised here there is none to close.

    Anything else that is not a regular file is refused too, as :func:`refuse_unwritable`
    refuses it before the work: a FIFO (the rename would replace it, and whoever reads from it
    would wait for a file that never comes), a socket, a device or a directory (hostile19). A
    caller that checked before its work still meets here what appeared at the name meanwhile."""
    dfd, last = open_parent(rel, error=error, at=at)
    if dfd is None:
        dfd = os.open(".", _DIR_FLAGS)
    try:
        with contextlib.suppress(FileNotFoundError):
            mode = os.lstat(last, dir_fd=dfd).st_mode
            if stat.S_ISLNK(mode):
                raise link_refused(name, error)
            if not stat.S_ISREG(mode):
                e = error(f"{name}: {_describe(mode)} (expected a regular file to replace)")
                e.exit_code = ExitStatus.ERROR
                raise e
    except BaseException:
        os.close(dfd)
        raise
    return dfd, last


def atomic_write(name: str, data: bytes, *, error: ErrorFactory, mode: int = 0o600,
                 at: HeldDir | None = None) -> None:
    """Replace ``name`` with ``data`` at once: readers see the old file or the new one, never
    half of it, and a crash at any point leaves no temporary file behind. A symbolic link at
    ``name`` is refused (as :func:`refuse_link`), not silently replaced by a file.

    The temporary file is made, named and renamed relative to a descriptor of the target's
    directory (:func:`open_parent`), so a directory on the way swapped for a link during the
    write cannot send the file elsewhere. ``at``: ``name`` is relative to that held directory
    (:func:`open_dir`), and messages name the whole path."""
    rel, name = name, (at.join(name) if at is not None else name)
    base = os.path.basename(rel) or rel
    dfd: int | None = None
    tmp: str | None = None
    try:
        dfd, last = _replace_target(rel, name, error=error, at=at)
        anon = _anonymous(dfd, mode)
        if anon is None:
            fd, tmp = _named_temp(dfd, base, mode)
        else:
            fd = anon
        try:
            _write_all(fd, data)
            os.fchmod(fd, mode)
            os.fsync(fd)
            if tmp is None:
                tmp = _link_anonymous(fd, dfd, base)
                if tmp is None:  # no /proc: write it again under a name
                    os.close(fd)
                    fd, tmp = _named_temp(dfd, base, mode)
                    _write_all(fd, data)
                    os.fchmod(fd, mode)
                    os.fsync(fd)
        finally:
            os.close(fd)
        _rename_over(dfd, tmp, last)
        tmp = None
    except OSError as e:
        raise error(f"{name}: cannot write: {e.strerror or e}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
        if dfd is not None:
            os.close(dfd)


@contextlib.contextmanager
def atomic_file(name: str, *, error: ErrorFactory, mode: int = 0o600,
                at: HeldDir | None = None) -> Iterator[BinaryIO]:
    """:func:`atomic_write` for data written as it comes (a history streamed from Prometheus):
    a binary file to write to, renamed over ``name`` when the ``with`` block ends normally and
    removed, leaving ``name`` as it was, when it raises. The temporary file is created before
    the block runs (so an unwritable directory is said before any work), with an ``O_EXCL``
    name next to the target, all relative to a descriptor of the directory (:func:`open_parent`):
    a directory on the way swapped for a link meanwhile cannot send the file elsewhere. A
    symbolic link at ``name`` is refused, not replaced."""
    rel, name = name, (at.join(name) if at is not None else name)
    base = os.path.basename(rel) or rel
    dfd: int | None = None
    tmp: str | None = None
    try:
        dfd, last = _replace_target(rel, name, error=error, at=at)
        fd, tmp = _named_temp(dfd, base, mode)
    except OSError as e:
        if dfd is not None:
            os.close(dfd)
        raise error(f"{name}: cannot write: {e.strerror or e}") from None
    except BaseException:
        if dfd is not None:
            os.close(dfd)
        raise
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        _rename_over(dfd, tmp, last)
        tmp = None
    except OSError as e:
        raise error(f"{name}: cannot write: {e.strerror or e}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
        os.close(dfd)


def _rename_over(dfd: int, tmp: str, last: str) -> None:
    """Rename the written temporary file over the target, both in the directory behind ``dfd``,
    and make the rename durable (the temporary name is then gone)."""
    os.replace(tmp, last, src_dir_fd=dfd, dst_dir_fd=dfd)
    _fsync_dir_fd(dfd)


def _fsync_dir_fd(dfd: int) -> None:
    """``fsync`` the directory behind ``dfd`` (which may be an ``O_PATH`` descriptor, which
    ``fsync`` refuses: the directory is then opened again through it, not by name)."""
    with contextlib.suppress(OSError):
        fd = os.open(".", os.O_RDONLY | _CLOEXEC, dir_fd=dfd)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _named_temp(dfd: int, base: str, mode: int) -> tuple[int, str]:
    """A new temporary file next to the target (``O_EXCL``, never through a link), for a
    filesystem without ``O_TMPFILE``."""
    for _ in range(100):
        tmp = f".{base}.{os.urandom(4).hex()}.tmp"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode,
                         dir_fd=dfd)
        except FileExistsError:
            continue
        return fd, tmp
    raise OSError(errno.EEXIST, "no free temporary name")


def _anonymous(dfd: int, mode: int) -> int | None:
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return None
    try:
        return os.open(".", flag | os.O_WRONLY | _CLOEXEC, mode, dir_fd=dfd)
    except OSError:
        return None  # a filesystem without O_TMPFILE


def _link_anonymous(fd: int, dfd: int, base: str) -> str | None:
    """Give the anonymous inode a name, just before it is renamed over the target."""
    for _ in range(8):
        tmp = f".{base}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        try:
            os.link(f"/proc/self/fd/{fd}", tmp, dst_dir_fd=dfd)
            return tmp
        except FileExistsError:
            continue
        except OSError:
            return None
    return None


def is_json_line(line: bytes) -> bool:
    """A JSON-lines file's last line is a whole record when it parses (its newline is all it
    lacks); anything else is an append cut short."""
    import orjson

    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True


def append_record(name: str, record: bytes, *, gz: bool, error: ErrorFactory,
                  mode: int = 0o600, complete: Callable[[bytes], bool] | None = None,
                  accept: Callable[[bytes | None], None] | None = None,
                  at: HeldDir | None = None) -> int:
    """Append one newline-terminated ``record`` (a gzip member when ``gz``) to ``name``.

    A last line without its newline is a record cut short by a crash and is cut off first —
    unless ``complete`` says it is whole (it parses): then it is kept, and a newline goes before
    the record. ``accept``, called under the lock with the last whole line (None: none) before
    anything changes, may raise to refuse the append (the file is then left as it was).
    Returns the number of bytes of a partial last record that was cut off (0 normally).
    ``at``: ``name`` is relative to that held directory (:func:`open_dir`).
    """
    fd, created = open_private(name, error=error, mode=mode, at=at,
                               what="a regular file to append to")
    name = at.join(name) if at is not None else name
    directory = os.path.dirname(os.path.abspath(name))
    try:
        _lock(fd)
        size = os.fstat(fd).st_size
        good, glue, last = _good_end(fd, size, gz=gz, complete=complete,
                                     want_last=accept is not None, name=name, error=error)
        if accept is not None:
            accept(last)
        if good != size:
            os.ftruncate(fd, good)
        os.lseek(fd, good, os.SEEK_SET)
        try:
            _write_all(fd, glue + record)
            os.fsync(fd)
        except OSError as e:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, good)
                os.fsync(fd)
            raise error(f"{name}: cannot write: {e.strerror or e}; nothing was appended") from None
    except OSError as e:
        raise error(f"{name}: cannot append: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if created:
        _fsync_dir(directory)
    return size - good


def try_lock(name: str, *, error: ErrorFactory) -> int | None:
    """A descriptor of ``name`` (created 0600, never through a link) holding an exclusive
    ``flock``, or None when another process holds it. The caller keeps the descriptor open for as
    long as it holds the lock; the kernel drops it when the process ends, ``kill -9`` included,
    so it never goes stale."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return -1
    fd, _ = open_private(name, error=error, what="a lock file")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError as e:
        os.close(fd)
        raise error(f"{name}: cannot lock: {e.strerror or e}") from None
    return fd


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    fcntl.flock(fd, fcntl.LOCK_EX)


def _good_end(fd: int, size: int, *, gz: bool, complete: Callable[[bytes], bool] | None,
              want_last: bool = True, name: str = "", error: ErrorFactory = ConfigError
              ) -> tuple[int, bytes, bytes | None]:
    """Where the whole records end, what must go before the next one (a newline, when a whole
    last record lacks its own), and the last whole line (None: none, or not ``want_last``).

    A plain file's unterminated tail and last line are read only when they are needed, and
    never past :func:`max_line_bytes` (a file ending in a 200 MB line was read into memory at
    every append, a journal's at every request): such a file is refused, nothing appended."""
    if gz:
        good, tail, last = _good_end_gz(fd, size)
    else:
        cap = max_line_bytes()
        good = _good_end_lines(fd, size)
        if size - good > cap:
            raise error(f"{name}: ends with a line longer than {human_size(cap)} and no newline "
                        "(the limit for one line, an eighth of the input size limit); nothing "
                        "was appended")
        tail = os.pread(fd, size - good, good) if good != size and complete is not None else b""
        last = _last_line(fd, good, cap, name, error) if want_last else None
    if good != size and complete is not None and tail is not None and complete(tail):
        glue = gzip_member(b"\n") if gz else b"\n"
        return size, glue, tail
    return good, b"", last


def gzip_member(text: bytes) -> bytes:
    import gzip

    return gzip.compress(text, compresslevel=6, mtime=0)


def _last_line(fd: int, end: int, cap: int | None = None, name: str = "",
               error: ErrorFactory = ConfigError) -> bytes | None:
    """The line that ends (with its newline) at ``end``, without the newline; one longer than
    ``cap`` is refused (``error``) as soon as that is known."""
    if end <= 0:
        return None
    pos = end - 1
    parts: list[bytes] = []
    while pos > 0:
        start = max(0, pos - 65536)
        chunk = os.pread(fd, pos - start, start)
        at = chunk.rfind(b"\n")
        if at >= 0:
            parts.append(chunk[at + 1:])
            break
        parts.append(chunk)
        pos = start
        if cap is not None and end - 1 - pos > cap:
            raise error(f"{name}: its last line is longer than {human_size(cap)} (the limit for "
                        "one line, an eighth of the input size limit); nothing was appended")
    return b"".join(reversed(parts))


def _good_end_lines(fd: int, size: int) -> int:
    """The length of the file up to and including its last newline (all of it when it ends in
    one)."""
    if size == 0:
        return 0
    if os.pread(fd, 1, size - 1) == b"\n":
        return size
    pos = size
    while pos > 0:
        start = max(0, pos - 65536)
        chunk = os.pread(fd, pos - start, start)
        at = chunk.rfind(b"\n")
        if at >= 0:
            return start + at + 1
        pos = start
    return 0


def _good_end_gz(fd: int, size: int) -> tuple[int, bytes | None, bytes | None]:
    """The end of the last complete gzip member whose text ends with a newline (each append
    writes one member holding one line); the text after it when every member after it is
    complete (None: a member cut short, or garbage); and the last whole line before it."""
    good = 0
    offset = 0
    pending = b""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    started = False  # bytes fed to ``d``, whose member has not ended yet
    text = bytearray()  # the text of the complete members after ``good``
    last: bytes | None = None
    while True:
        if not pending:
            if offset >= size:
                return good, (None if started else bytes(text)), last
            pending = os.pread(fd, min(_CHUNK, size - offset), offset)
            if not pending:
                return good, None, last
            offset += len(pending)
        started = True
        try:
            out = d.decompress(pending, _CHUNK)
        except zlib.error:
            return good, None, last
        text += out
        if len(text) > LIMITS.max_input_bytes:
            return good, None, last
        if d.eof:
            pending = d.unused_data
            if text.endswith(b"\n"):
                good = offset - len(pending)
                line = bytes(text[:-1])
                last = line[line.rfind(b"\n") + 1:]
                text = bytearray()
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
            started = False
            continue
        pending = d.unconsumed_tail


def warn(message: str) -> None:
    """A warning on stderr, for the few file-level events the caller cannot see."""
    from lbctl.safe.text import one_line

    sys.stderr.write(f"lbctl: warning: {one_line(message)}\n")
