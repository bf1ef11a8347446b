"""Class-data sharing (AppCDS) for the local Spark JVM: the start-up's class loading, once.

A bare local Spark start costs ~10 s of CPU, most of it the JVM loading, verifying and linking
~13,000 classes from Spark's 280 jars — and again for every first query (Catalyst, codegen,
Parquet). The JDK's class-data sharing keeps those classes, parsed and verified, in a memory-
mapped archive: on the bundled example it halves a bare start's CPU (13.3 → 7.8 s) and the first
query's wall. Only public JVM options are used (Java 13+; Spark 4 needs Java 17):

* no archive yet: the JVM gets ``-XX:ArchiveClassesAtExit=<partial>`` and writes the classes
  this run loaded when it exits (after lbctl has returned: ~150 MB, 10–20 s of one core, once),
  with ``-Xlog:cds+dynamic=info:file=<partial>.log`` as the JVM's own word that it finished;
* a JVM that cannot write it (CDS takes classes from jars, not from a non-empty directory such
  as a filled ``$SPARK_HOME/conf`` on the class path) logs why and writes none: later starts
  run without the cache rather than trying again (a new key — other jars, another JDK — tries);
* the next start finds the log saying so, renames the partial into place (atomic) and maps it
  with ``-XX:SharedArchiveFile``. While a dump is under way (a recent partial without that line)
  no second one is started; a partial left by a JVM that died (its lbctl gone and nothing
  written for :data:`STALE_SECONDS`) is removed.

The archive holds the classes of the run that wrote it, so only a start that does a fleet
command's work writes one (``plan(dump=False)``: e.g. a benchmark's bare start, which would leave
an archive of the JVM's start-up alone). An archive of a bare start left 12,000 of a report's
23,000 classes to the jars: the report cost 15 CPU-s instead of 12.3 with an archive of real
work (an ingest's serves a report as well as a report's own, and the other way round). Archives
are named with :data:`FORMAT` so those written before this rule (``spark-cds-<key>.jsa``) are
not used, and are removed when the new one is written.

The archive is keyed by the Java executable and the jars (names, sizes, times): another JDK or
Spark gets an archive of its own, and the JVM itself rejects an archive that does not fit
(``-Xshare:auto``, the default: it then loads classes as before). JVM warnings go to stderr,
which is lbctl's Spark log, never to stdout (``-Xlog:all=warning:stderr``).

Where: ``$LBCTL_SPARK_CLASS_CACHE`` (a directory; ``off`` disables it), else
``$XDG_CACHE_HOME/lbctl`` or ``~/.cache/lbctl`` — a directory of the user's own (0700; a
symbolic link, another owner or group/world write access disables the cache rather than
trusting it). Local mode only: on a cluster the JVMs are the deployment's business.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import time
from pathlib import Path

from msgspec import Struct

ENV = "LBCTL_SPARK_CLASS_CACHE"
#: the line the JVM logs once the archive is completely written (JDK 13–17+:
#: ``DynamicArchive::dump``'s "Written dynamic archive …")
DONE_MARK = "Written dynamic archive"
#: a partial archive whose JVM has not finished after this long is left-over, not in progress
STALE_SECONDS = 15 * 60
#: JVM log lines to lbctl's Spark log (the JVM's stderr), not stdout, where lbctl's result goes
LOG_TO_STDERR = "-Xlog:disable -Xlog:all=warning:stderr"
#: in the archive's name: archives of another format (``spark-cds-<key>.jsa``, which a bare start
#: may have written) are not used
FORMAT = "2"
#: characters a path may hold to pass through Spark's option splitting and ``-Xlog``'s syntax
_SAFE_PATH = re.compile(r"[A-Za-z0-9_./+-]+")


class Plan(Struct, frozen=True):
    """What a start does: map ``use``, or write ``dump`` (both None: neither)."""

    use: Path | None = None
    dump: Path | None = None
    why: str = ""

    def java_options(self) -> str:
        """The JVM options for ``spark.driver.extraJavaOptions`` (empty: none)."""
        if self.use is not None:
            return f"-XX:SharedArchiveFile={self.use} {LOG_TO_STDERR}"
        if self.dump is not None:
            return (f"-XX:ArchiveClassesAtExit={self.dump} {LOG_TO_STDERR} "
                    f"-Xlog:cds=off -Xlog:cds+dynamic=info:file={self.dump}.log")
        return ""


def cache_dir() -> Path | None:
    """The class cache's directory, or None when ``$LBCTL_SPARK_CLASS_CACHE=off``."""
    given = os.environ.get(ENV, "")
    if given.strip().lower() in ("off", "0", "false", "no"):
        return None
    if given:
        return Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lbctl"


def java_executable() -> str | None:
    """The ``java`` Spark's launcher runs: ``$JAVA_HOME/bin/java``, else the one on ``PATH``."""
    home = os.environ.get("JAVA_HOME")
    found = os.path.join(home, "bin", "java") if home else shutil.which("java")
    return os.path.realpath(found) if found and os.path.exists(found) else None


def spark_jars() -> Path | None:
    """``$SPARK_HOME/jars``, else the pip-installed pyspark's (found without importing it)."""
    import importlib.util

    home = os.environ.get("SPARK_HOME")
    if home:
        return Path(home) / "jars"
    spec = importlib.util.find_spec("pyspark")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "jars"


def archive_key(java: str, jars: Path) -> str:
    """A digest of the JVM and the jars: an archive fits only the classes it was made from."""
    h = hashlib.sha256()
    st = os.stat(java)
    h.update(f"{java}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    with os.scandir(jars) as it:
        for e in sorted(it, key=lambda e: e.name):
            if e.name.endswith(".jar"):
                s = e.stat()
                h.update(f"{e.name}\0{s.st_size}\0{s.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def plan(*, prepare: bool = True, now: float | None = None, dump: bool = True) -> Plan:
    """The class cache for this start. ``prepare=False`` only looks (``--debug``'s listing);
    otherwise the directory is made, a finished dump renamed into place and a stale one removed.
    ``dump=False``: a start whose classes are no fair sample of a fleet command's (a bare start)
    maps an archive but never writes one."""
    where = cache_dir()
    if where is None:
        return Plan(why=f"${ENV}=off")
    java, jars = java_executable(), spark_jars()
    if java is None or jars is None or not jars.is_dir():
        return Plan(why="no java or no Spark jars found")
    if not _SAFE_PATH.fullmatch(str(where)):
        return Plan(why=f"{where}: a path with characters JVM options cannot carry")
    if prepare and not _own_dir(where):
        return Plan(why=f"{where}: not a private directory of this user")
    key = archive_key(java, jars)
    name = f"spark-cds{FORMAT}-{key}"
    final = where / f"{name}.jsa"
    now = time.time() if now is None else now
    busy = failed = False
    for log in sorted(where.glob(f"{name}.*.part.log")) if where.is_dir() else []:
        part = Path(str(log)[:-len(".log")])
        text = _head(log)
        if DONE_MARK in text and part.is_file():
            if not prepare:
                return Plan(use=final)
            with contextlib.suppress(OSError):
                os.replace(part, final)
                log.unlink()
        elif "[error]" in text:  # kept: the mark that this key's dump failed
            failed = True
        elif _alive(part) or now - _mtime(part, log) < STALE_SECONDS:
            busy = True  # its lbctl still runs, or its JVM is writing
        elif prepare:  # a JVM that died before it finished
            for p in (part, log):
                with contextlib.suppress(OSError):
                    p.unlink()
    if final.is_file():
        if prepare:
            _remove_older(where, key)
        return Plan(use=final)
    if not dump:
        return Plan(why="this start does not write the archive")
    if failed:
        return Plan(why=f"the JVM could not write the archive (see {where}/{name}.*.log)")
    if busy:
        return Plan(why="another start is writing the archive")
    return Plan(dump=where / f"{name}.{os.getpid()}.part")


def _remove_older(where: Path, key: str) -> None:
    """The archive of the same JVM and jars in the format before :data:`FORMAT` (and its leftover
    partials): ~150 MB that is never used again."""
    for old in [where / f"spark-cds-{key}.jsa", *where.glob(f"spark-cds-{key}.*.part*")]:
        with contextlib.suppress(OSError):
            if old.is_file() and not old.is_symlink():
                old.unlink()


def _head(log: Path) -> str:
    try:
        with open(log, "rb") as f:
            return f.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return ""


def _alive(part: Path) -> bool:
    """Whether the lbctl process that started this dump (its pid is in the name) still runs."""
    try:
        pid = int(part.name.rsplit(".", 2)[-2])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _mtime(*paths: Path) -> float:
    times = [0.0]
    for p in paths:
        with contextlib.suppress(OSError):
            times.append(p.stat().st_mtime)
    return max(times)


def _own_dir(path: Path) -> bool:
    """Make ``path`` (0700) if missing; True when it is a real directory of this user that no one
    else can write to (the JVM maps what it finds there)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))
