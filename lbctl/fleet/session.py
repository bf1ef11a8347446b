"""The one recipe for a Spark session: local and quiet by default, any cluster on request.

Why each default:

* in local mode ``PYSPARK_PYTHON`` is this interpreter: otherwise Python workers run whatever ``python3`` is on
  ``PATH`` and the first pandas UDF fails to import pandas (or lbctl).
* local masters bind to the loopback interface (``SPARK_LOCAL_IP``, ``spark.driver.host``): no
  hostname lookups, no warnings, nothing listening on the network.
* in local mode: no web UI, no console progress bar (lbctl draws its own, :mod:`lbctl.fleet.progress`), log
  level ERROR, UTC session time zone, and sizes fitted to the machine (:func:`local_tuning`):
  shuffle partitions from the cores, input splits of at most 64 MiB and at least four per core
  (JSON decoding is the costly part: splits small and even enough to keep every core busy), driver memory a quarter of the machine's (the
  driver JVM is the executor in local mode; 1–8 GiB), and for inputs under 1 GiB the C1 JIT
  only (``-XX:TieredStopAtLevel=1``: a job of seconds spends more time optimising code with C2
  than it gains), and under 64 MiB the serial collector (``-XX:+UseSerialGC``: G1's parallel and
  concurrent threads cost more than they save on a heap that holds a few thousand rows; on the
  bundled example ingest + report took 27.5–29.0 CPU-s instead of 30.9–33.5, interleaved pairs).
  Spark's code generation is left on: turning it off for a tiny input saved ~2 CPU-s of a
  report, but ``spark.sql.codegen.wholeStage`` and ``spark.sql.codegen.factoryMode`` are Spark's
  internal settings, not its public configuration.
* the JVM's own stderr chatter (incubator-module warning, log4j banner, native-library warning)
  goes to a log file: fd 2 is pointed at the file while the JVM is spawned and restored after, so
  the JVM (and the Python workers it starts) keep writing there while lbctl's messages reach the
  terminal.
* pyspark's pandas-3 ``FutureWarning`` and ``Pandas4Warning`` are filtered: they are about
  pyspark's own calls and say nothing the user can act on.

``--master`` and ``--conf key=value`` pass through and win over every default. Under
``spark-submit`` (which sets ``PYSPARK_GATEWAY_PORT``) the master and deploy settings come from
spark-submit unless ``--master`` is given.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from lbctl.errors import LbctlError, UsageError
from lbctl.fleet import _compat, classcache

T = TypeVar("T")
U = TypeVar("U")

DEFAULT_MASTER = "local[*]"
APP_NAME = "lbctl-fleet"


class SparkError(LbctlError):
    """Spark could not start or a job failed; the message names the log file."""


def parse_conf(items: Iterable[str]) -> dict[str, str]:
    """``--conf key=value`` items (as spark-submit takes them) → a dict."""
    conf: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {item!r}: expected key=value, e.g. spark.driver.memory=2g")
        conf[key.strip()] = value
    return conf


SMALL_JOB_BYTES = 1 << 30  # below this much input, C1 alone compiles fast enough
TINY_JOB_BYTES = 64 << 20  # below this much input, one task per core is balance enough
#: C1 alone reserves 48 MiB for compiled code, and Spark's generated classes fill it within a
#: few queries: the JVM then stops compiling ("CodeCache is full. Compiler has been
#: disabled") and runs everything else interpreted. 240 MiB is what tiered compilation reserves.
C1_ONLY = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
#: a tiny input's heap holds a few thousand rows: G1's parallel and concurrent GC threads (and its
#: barriers) cost a short JVM more than they save, and the JVM's own ergonomics pick the serial
#: collector on small machines for the same reason
SERIAL_GC = "-XX:+UseSerialGC"


#: a run with less input than this reads every file with lbctl's reader in the driver (see
#: :mod:`lbctl.fleet.ingest`); ``--conf spark.lbctl.fleet.smallInputBytes=0`` never does. Not
#: one of :func:`default_conf`'s settings: ``getOrCreate`` writes a builder's settings over a
#: running session's, and a session made with another value (the tests') must keep it
SMALL_INPUT_CONF = "spark.lbctl.fleet.smallInputBytes"
SMALL_INPUT_BYTES = 16 << 20


def local_tuning(input_bytes: int | None = None) -> dict[str, str]:
    """Local-mode sizes from this machine (cores, memory) and, when known, the input's size."""
    cores = os.cpu_count() or 2
    tiny = input_bytes is not None and input_bytes < TINY_JOB_BYTES
    conf = {
        # a tiny input: every task deserializes the plan (large for the ingest) and every
        # shuffle partition is a task, for a handful of rows each
        "spark.sql.shuffle.partitions": str(cores if tiny else max(8, 2 * cores)),
        "spark.sql.files.maxPartitionBytes": "64m",
        # at least 4 splits per core: small inputs are cut evenly instead of into a few 64 MiB
        # splits and a straggler
        "spark.sql.files.minPartitionNum": str(cores if tiny else 4 * cores),
        "spark.driver.memory": f"{_driver_memory_mib()}m",
    }
    if input_bytes is not None and input_bytes < SMALL_JOB_BYTES:
        conf["spark.driver.extraJavaOptions"] = f"{C1_ONLY} {SERIAL_GC}" if tiny else C1_ONLY
    return conf


def _driver_memory_mib() -> int:
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1 << 20)
    except (ValueError, OSError, AttributeError):
        total = 4096
    return max(1024, min(8192, total // 4))


def default_conf(master: str | None, input_bytes: int | None = None,
                 cache: classcache.Plan | None = None) -> dict[str, str]:
    """What lbctl sets unless ``--conf`` says otherwise (see the module docstring); ``cache``:
    the class cache's plan for this start (:mod:`lbctl.fleet.classcache`; local mode only)."""
    conf = {
        "spark.log.level": "ERROR",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        # partition values stay strings: a cluster named "42" or a date must not change type
        "spark.sql.sources.partitionColumnTypeInference.enabled": "false",
    }
    if is_local(master):  # on a cluster these are the deployment's business (spark-submit)
        conf.update({
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.pyspark.python": sys.executable,
            "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1",
            "spark.sql.warehouse.dir": str(Path(tempfile.gettempdir()) / "lbctl-spark-warehouse"),
            **local_tuning(input_bytes),
        })
        options = cache.java_options() if cache is not None else ""
        if options:
            jit = conf.get("spark.driver.extraJavaOptions", "")
            conf["spark.driver.extraJavaOptions"] = f"{jit} {options}".strip()
    return conf


def resolve_master(master: str | None) -> str | None:
    """``--master``, else ``local[*]``; under spark-submit (None) spark-submit's own."""
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        return DEFAULT_MASTER
    return master


def effective_conf(master: str | None, conf: Mapping[str, str] | None = None,
                   input_bytes: int | None = None) -> list[tuple[str, str, str]]:
    """(key, value, origin) of every setting lbctl passes: ``--conf`` or ``lbctl default``."""
    master = resolve_master(master)
    given = dict(conf or {})
    cache = classcache.plan(prepare=False) if is_local(master) else None
    out = [(k, v, "lbctl default") for k, v in default_conf(master, input_bytes, cache).items()
           if k not in given]
    out += [(k, v, "--conf") for k, v in given.items()]
    return sorted(out)


def is_local(master: str | None) -> bool:
    return master is not None and (master == "local" or master.startswith("local["))


_LOG: list[Path] = []  # this process's log, once created


def log_path() -> Path:
    """Where the JVM's stderr goes for this process: a name in ``$TMPDIR`` no one can guess
    (random), created exclusively, 0600 — a predictable name would let another user plant a
    link there and have the JVM append to the link's target."""
    if not _LOG:
        from lbctl.safe.files import open_private

        for _ in range(16):
            path = Path(tempfile.gettempdir()) / f"lbctl-spark-{os.urandom(8).hex()}.log"
            try:
                fd, _created = open_private(str(path), new=True, error=LbctlError)
            except LbctlError:
                if path.exists() or path.is_symlink():
                    continue  # that name is taken: draw another
                raise
            os.close(fd)
            _LOG.append(path)
            break
        else:
            raise LbctlError(f"cannot create a log file in {tempfile.gettempdir()}")
    return _LOG[0]


def quiet_warnings() -> None:
    import logging

    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                            category=FutureWarning)
    warnings.filterwarnings("ignore", message="The copy keyword is deprecated")
    # a job that fails under toPandas is also warned about, with the whole Java stack trace, on
    # stderr; lbctl says why in one line itself (:func:`job_error`, hostile19)
    warnings.filterwarnings("ignore", message="toPandas attempted Arrow optimization because .*"
                            "can not continue", category=UserWarning)
    # pyspark logs every failed query's context as JSON on stderr; lbctl reports errors itself
    for name in ("DataFrameQueryContextLogger", "SQLQueryContextLogger"):
        logging.getLogger(name).disabled = True
    # Py4J logs a Ctrl-C during a call to the JVM, with a traceback, on the root logger
    # (GatewayClient.send_command); lbctl says "interrupted" itself (lbctl.cli.fleet)
    logging.getLogger().addFilter(_not_py4j_interrupt)


def _not_py4j_interrupt(record: Any) -> bool:
    return not str(record.msg).startswith("KeyboardInterrupt while sending command")


def spark_session(
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    *,
    app_name: str = APP_NAME,
    input_bytes: int | None = None,
    dump_classes: bool = True,
) -> Any:
    """A ``SparkSession`` (an existing one is reused, as ``getOrCreate`` does).

    ``master=None`` means ``local[*]``, except under spark-submit where spark-submit decides.
    ``dump_classes=False``: a start that does no fleet work (a benchmark's bare start) maps the
    class cache but never writes it (:func:`lbctl.fleet.classcache.plan`).
    """
    sql = _compat.sql()
    master = resolve_master(master)
    if is_local(master):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    quiet_warnings()
    builder = sql.SparkSession.builder.appName(app_name)
    if master is not None:
        builder = builder.master(master)
    given = dict(conf or {})
    # the class cache only when lbctl chooses the driver's JVM options (and starts the JVM)
    cache = (classcache.plan(dump=dump_classes) if is_local(master) and "spark.driver.extraJavaOptions" not in given
             and active_session() is None else None)
    for key, value in {**default_conf(master, input_bytes, cache), **given}.items():
        builder = builder.config(key, value)
    log = log_path()
    try:
        with _stderr_to(log):
            session = builder.getOrCreate()
    except Exception as e:
        raise SparkError(f"cannot start Spark ({master or 'spark-submit master'}): "
                         f"{_first_line(e)}; Spark's log: {log}") from None
    session.sparkContext.setLogLevel("ERROR")
    return session


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Point fd 2 at ``path`` while the block runs (the JVM started inside inherits it)."""
    with contextlib.suppress(AttributeError, ValueError):
        sys.stderr.flush()
    from lbctl.safe.files import open_private

    fd, _ = open_private(str(path), append=True, error=LbctlError)
    saved = os.dup(2)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def active_session(*, if_imported: bool = False) -> Any:
    """The session already running in this process, if any (without starting one). The active
    session is per thread: ask from the thread that made it. ``if_imported``: None without
    importing pyspark when it was never imported (then no session can be running)."""
    if if_imported and "pyspark.sql" not in sys.modules:
        return None
    spark_session_class = _compat.sql().SparkSession
    session = spark_session_class.getActiveSession()
    if session is not None:
        return session
    # The active session is the JVM thread's: a thread whose Py4J connection is new (another
    # Python thread, or this one after a signal broke its connection during a call) sees none
    # although the process runs one. ``SparkSession.active()`` falls back to the default
    # session, so a session the caller made is never taken for lbctl's own (and stopped).
    try:
        return spark_session_class.active()
    except Exception:  # NO_ACTIVE_OR_DEFAULT_SESSION: none is running
        return None


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


#: the system's refusals a failed write or read ends in, as the JVM words them (its
#: ``IOException`` messages are the C library's ``strerror`` text): the user's to fix, never a
#: Spark bug, so the job's one line says which and where rather than pointing at Spark's log
_REFUSALS = ("No space left on device", "Disk quota exceeded", "File too large",
             "Read-only file system", "Permission denied")
#: a path in a refusal: Hadoop's ``file:/…`` URI, or ``FileNotFoundException``'s ``/path (reason)``
_URI = re.compile(r"file:(/[^\s,;'\"]*)")
_PATH_REASON = re.compile(r"(/[^\s(]*) \((" + "|".join(_REFUSALS) + r")\)")


def _cause_texts(e: BaseException) -> list[str]:
    """The texts of ``e``'s cause chain, outermost first: the Python chain's messages, then,
    for an error that crossed Py4J, the Java exception's ``getCause()`` chain (its
    ``toString()`` each: the public API PySpark exposes as ``Py4JJavaError.java_exception``),
    then every line of the text Py4J gives (its ``Caused by:`` lines). Bounded: a cyclic or
    endless chain stops at 32, and a Java call that fails is skipped."""
    texts: list[str] = []
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen and len(seen) < 32:
        seen.add(id(cur))
        java = getattr(cur, "java_exception", None)
        for _ in range(32):
            if java is None:
                break
            try:
                texts.append(str(java.toString()))
                java = java.getCause()
            except Exception:  # the gateway is gone, or not a Java object: the text below
                break
        texts.extend(line.strip() for line in str(cur).splitlines())
        cur = cur.__cause__ or cur.__context__
    return texts


def refusal(e: BaseException) -> tuple[str, str | None] | None:
    """The system's refusal at the root of a failed job (``No space left on device``,
    ``Read-only file system``, ``Permission denied``, a quota, a file-size limit) and the path
    it names when one does (Hadoop's ``file:`` URI, ``/path (reason)``); None: some other
    failure. The deepest cause that holds a refusal decides."""
    texts = _cause_texts(e)
    reasons = [r for text in texts for r in _REFUSALS if r in text]
    if not reasons:
        return None
    paths = [m.group(1) for text in texts if (m := _PATH_REASON.search(text))]
    paths += [m.group(1).rstrip(".") for text in texts if (m := _URI.search(text))]
    return reasons[-1], (paths[0] if paths else None)


def job_error(e: BaseException, writing: Path | str | None = None,
              scratch: str | None = None) -> SparkError:
    """A failed Spark job as one line: the system's refusal at its root when there is one
    (``cannot write OUT: No space left on device``; ``writing`` is the directory the job writes,
    named rather than Spark's staging path inside it; ``scratch``, where Spark keeps its shuffle
    and spill files (:func:`scratch_dirs`), is named when the refusal names no file: a job that
    writes no output of its own, such as the report's, can only have been refused there), else
    the Python exception of the task when there is one, else the first line and Spark's log."""
    refused = refusal(e)
    if refused is not None:
        reason, path = refused
        where: Path | str | None = writing if writing is not None else path
        if where is None and scratch is not None:
            return SparkError(f"cannot write Spark's scratch space {scratch}: {reason}")
        verb = "write" if writing is not None or reason != "Permission denied" else "read or write"
        return SparkError(f"cannot {verb} {where or 'a file Spark needs'}: {reason}")
    text = str(e)
    reason = _first_line(e)
    for line in text.splitlines():  # a PythonException carries the worker's traceback
        line = line.strip()
        if line.startswith(("lbctl.", "ValueError:", "TypeError:", "KeyError:", "RuntimeError:")):
            reason = line
    return SparkError(f"Spark job failed: {reason} (Spark's log: {log_path()})")


def from_spark(e: BaseException) -> bool:
    """Whether ``e`` is Spark's (a job or a call that failed: PySpark's exceptions, Py4J's)
    rather than lbctl's own or Python's."""
    return type(e).__module__.startswith(("pyspark", "py4j"))


def scratch_dirs(spark: Any) -> str:
    """Where the session's executors keep shuffle and spill files, and the setting that chose it
    (``/data/tmp (spark.local.dir)``), as Spark chooses it
    (Spark's ``Utils.getConfiguredLocalDirs``, outside YARN): ``SPARK_LOCAL_DIRS`` (set by a
    cluster manager, or the user), else ``spark.local.dir``, else the JVM's ``java.io.tmpdir``.
    Asked of the driver's JVM, which made the choice (in local mode the executors are that JVM);
    when the gateway is gone, Python's temporary directory, the usual ``java.io.tmpdir``."""
    default = "(the JVM's java.io.tmpdir; --conf spark.local.dir=DIR moves it)"
    try:
        env = spark.sparkContext._jvm.java.lang.System.getenv("SPARK_LOCAL_DIRS")
        if env:
            return f"{env} (SPARK_LOCAL_DIRS)"
        conf = spark.sparkContext.getConf().get("spark.local.dir")
        if conf:
            return f"{conf} (spark.local.dir)"
        return f"{spark.sparkContext._jvm.java.lang.System.getProperty('java.io.tmpdir')} {default}"
    except Exception:  # the gateway is gone
        return f"{tempfile.gettempdir()} {default}"


@contextlib.contextmanager
def spark_jobs(spark: Any) -> Iterator[None]:
    """Spark's failures of the jobs run in the block, as :func:`job_error`'s one line (a refusal
    naming no file is Spark's scratch space's: :func:`scratch_dirs`); other errors pass as they
    are. For work that writes no output of Spark's (``fleet report``, ``fleet whatif``); ingest
    names the directory it writes instead."""
    try:
        yield
    except Exception as e:
        if not from_spark(e):
            raise
        raise job_error(e, scratch=scratch_dirs(spark)) from None


def _wait_through_ctrl_c(finished: Any) -> None:
    """Wait for the start even when Ctrl-C comes meanwhile, then let the interrupt go on: until
    the start ends fd 2 is Spark's log, so the one line saying the command was interrupted went
    there, and the user saw a bare exit 130 (hostile13). A second Ctrl-C stops waiting.

    An event, not ``Thread.join``: a join that Ctrl-C interrupts marks a running thread stopped
    (CPython 3.11's fix for bpo-45274 releases the thread's lock), and every later join returns
    at once."""
    try:
        while not finished.wait(0.2):
            pass
    except KeyboardInterrupt:
        with contextlib.suppress(KeyboardInterrupt):
            while not finished.wait(0.2):
                pass
        raise


def start_while(start: Callable[[], T], meanwhile: Callable[[], U]) -> tuple[T, U]:
    """``start()`` (a Spark start: the Python side mostly waits for the JVM, which keeps one core
    busy for seconds) in a thread while ``meanwhile()`` runs in this one — Python work the
    command needs anyway (imports of pandas, pyarrow and matplotlib, reading a small input): on
    the bundled example about a second of CPU that no longer adds to the wall time.

    ``meanwhile`` must not write to stderr: while the JVM starts, fd 2 is Spark's log (see
    :func:`spark_session`). An error of either is raised once both have ended (the start's
    first), so a JVM is never left starting behind a failed command."""
    import threading

    started: list[T] = []
    failed: list[BaseException] = []

    finished = threading.Event()

    def run() -> None:
        try:
            started.append(start())
        except BaseException as e:  # handed to the calling thread
            failed.append(e)
        finally:
            finished.set()

    thread = threading.Thread(target=run, name="lbctl-spark-start", daemon=True)
    thread.start()
    try:
        done = meanwhile()
    finally:
        _wait_through_ctrl_c(finished)
    if failed:
        raise failed[0]
    return started[0], done

