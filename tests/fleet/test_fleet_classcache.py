"""Spark's class cache (lbctl/fleet/classcache.py): dumped once, used after, never half-written."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from lbctl.fleet import classcache
from lbctl.fleet.classcache import DONE_MARK, STALE_SECONDS, plan
from lbctl.fleet.session import default_conf


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(classcache.ENV, str(where))
    return where


def test_the_first_start_dumps_the_next_finds_the_finished_archive(cache) -> None:
    first = plan()
    assert first.use is None and first.dump is not None and first.dump.parent == cache
    assert cache.stat().st_mode & 0o777 == 0o700
    opts = first.java_options()
    assert f"-XX:ArchiveClassesAtExit={first.dump}" in opts
    assert f"-Xlog:cds+dynamic=info:file={first.dump}.log" in opts
    assert "-Xlog:all=warning:stderr" in opts  # JVM warnings to Spark's log, not stdout
    # the JVM is still writing: no second dump, no half-written archive mapped
    first.dump.write_bytes(b"partial")
    Path(f"{first.dump}.log").write_text("[1.0s][info][cds,dynamic] Copying 3 klasses\n")
    busy = plan()
    assert (busy.use, busy.dump, busy.java_options()) == (None, None, "")
    # the JVM says it is done: the next start renames it into place and maps it
    with open(f"{first.dump}.log", "a") as f:
        f.write(f"[2.0s][info][cds,dynamic] {DONE_MARK} 0x800 - 0x900\n")
    assert plan(prepare=False).use is not None and first.dump.exists()  # looking moves nothing
    second = plan()
    assert second.use is not None and second.use.read_bytes() == b"partial"
    assert not first.dump.exists() and not Path(f"{first.dump}.log").exists()
    assert second.java_options().startswith(f"-XX:SharedArchiveFile={second.use} ")


def test_a_dump_whose_jvm_died_is_removed_and_redone(cache) -> None:
    mine = plan().dump
    assert mine is not None
    dead = mine.with_name(mine.name.replace(f".{os.getpid()}.", ".999999999."))  # no such pid
    dead.write_bytes(b"x")
    Path(f"{dead}.log").write_text("")
    assert plan().why == "another start is writing the archive"  # written to a moment ago
    later = time.time() + STALE_SECONDS + 1
    again = plan(now=later)
    assert not dead.exists() and not Path(f"{dead}.log").exists() and again.dump is not None
    # a dump whose lbctl still runs (this process) is never taken for dead
    again.dump.write_bytes(b"x")
    Path(f"{again.dump}.log").write_text("")
    assert plan(now=later + STALE_SECONDS).why == "another start is writing the archive"


@pytest.mark.parametrize("setting", ["off", "0"])
def test_the_cache_can_be_turned_off(monkeypatch, setting) -> None:
    monkeypatch.setenv(classcache.ENV, setting)
    assert plan().java_options() == ""


def test_an_unsafe_or_shared_directory_is_not_trusted(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(classcache.ENV, str(tmp_path / "with space"))
    assert plan().java_options() == ""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv(classcache.ENV, str(shared))
    assert plan().java_options() == "" and "private" in plan().why
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    monkeypatch.setenv(classcache.ENV, str(link))
    assert plan().java_options() == ""


def test_the_archive_is_keyed_by_the_jars(tmp_path) -> None:
    jars = tmp_path / "jars"
    jars.mkdir()
    (jars / "a.jar").write_bytes(b"1")
    java = classcache.java_executable()
    assert java is not None
    before = classcache.archive_key(java, jars)
    (jars / "b.jar").write_bytes(b"2")
    assert classcache.archive_key(java, jars) != before


def test_local_defaults_carry_the_cache_options_after_the_jit_ones(cache) -> None:
    p = plan()
    opts = default_conf("local[2]", 1000, p)["spark.driver.extraJavaOptions"]
    assert opts == ("-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC "
                    + p.java_options())
    big = default_conf("local[2]", None, p)["spark.driver.extraJavaOptions"]
    assert big == p.java_options()
    assert "spark.driver.extraJavaOptions" not in default_conf("spark://h:7077", 1000, None)


@pytest.mark.slow
def test_a_real_jvm_writes_the_archive_and_maps_it(cache, tmp_path) -> None:
    """The options lbctl passes, on a JVM of a few lines: the dump finishes with the mark, and a
    start with ``-Xshare:on`` (which fails when the archive cannot be mapped) uses it."""
    classes = tmp_path / "classes"
    classes.mkdir()
    src = classes / "Hello.java"
    src.write_text('public class Hello { public static void main(String[] a) {'
                   ' System.out.println(new java.util.TreeMap<String, Integer>().size()); } }\n')
    subprocess.run(["javac", "-d", str(classes), str(src)], check=True)
    jar = tmp_path / "hello.jar"  # CDS takes classes from jars (as Spark's), not directories
    subprocess.run(["jar", "cf", str(jar), "-C", str(classes), "Hello.class"], check=True)
    java = classcache.java_executable()
    assert java is not None

    def run(opts: str, *extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([java, *opts.split(), *extra, "-cp", str(jar), "Hello"],
                              capture_output=True, text=True)

    first = plan()
    assert first.dump is not None
    out = run(first.java_options())
    assert (out.returncode, out.stdout) == (0, "0\n"), out.stderr  # JVM log lines never reach stdout
    second = plan()
    assert second.use is not None and second.use.stat().st_size > 0
    mapped = run(second.java_options(), "-Xshare:on")
    assert (mapped.returncode, mapped.stdout) == (0, "0\n"), mapped.stderr
    assert os.listdir(cache) == [second.use.name]


def test_a_dump_the_jvm_refused_is_not_tried_again(cache) -> None:
    """A classpath CDS cannot take (a non-empty directory, e.g. a filled ``$SPARK_HOME/conf``):
    the JVM logs an error and writes no archive; later starts run without the cache instead of
    failing the same way every time."""
    first = plan()
    assert first.dump is not None
    Path(f"{first.dump}.log").write_text("[0.6s][error][cds] Error: non-empty directory 'x'\n")
    again = plan()
    assert again.java_options() == "" and "could not" in again.why


def test_a_bare_start_maps_the_archive_but_never_writes_one(cache) -> None:
    """A start that does no fleet work (a benchmark's bare start) would leave an archive of the
    JVM's start-up alone, and every later command would load most of its classes from the jars."""
    assert plan(dump=False).java_options() == "" and plan(dump=False).dump is None
    assert not any(cache.iterdir())
    first = plan()
    assert first.dump is not None
    first.dump.write_bytes(b"archive")
    Path(f"{first.dump}.log").write_text(f"[2.0s][info][cds,dynamic] {DONE_MARK} 0x8 - 0x9\n")
    assert plan(dump=False).use is not None  # once written, every start maps it


def test_an_archive_of_the_older_format_is_not_used_and_is_removed(cache) -> None:
    """Archives named before :data:`classcache.FORMAT` may be a bare start's: not used, and
    removed once the new one is in place."""
    java, jars = classcache.java_executable(), classcache.spark_jars()
    assert java is not None and jars is not None
    key = classcache.archive_key(java, jars)
    cache.mkdir(mode=0o700)
    old = cache / f"spark-cds-{key}.jsa"
    old.write_bytes(b"old")
    first = plan()
    assert first.dump is not None and first.use is None and old.exists()
    first.dump.write_bytes(b"new")
    Path(f"{first.dump}.log").write_text(f"[2.0s][info][cds,dynamic] {DONE_MARK} 0x8 - 0x9\n")
    second = plan()
    assert second.use is not None and second.use.read_bytes() == b"new" and not old.exists()
