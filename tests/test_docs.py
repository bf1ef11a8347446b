"""The documentation cannot rot: generated pages equal their sources, every command has a page,
nothing refers outside the project, and every command line of the README's and docs/' ``sh``
blocks runs — against the bundled examples and a sandbox cluster — and succeeds.

How a ``sh`` block is run: each logical line (``\\`` continuations joined, comments dropped) is
cut at ``&&``, ``;``, ``|``, ``>`` and ``&``; every piece that starts with ``lbctl`` (or
``.venv/bin/lbctl``) is run in-process in a directory holding a copy of the examples, with the
sandbox's ``--admin-url`` and ``COLUMNS=80``. Other programs (pip, sleep, spark-submit) are not
run. Lines that cannot run here are skipped for a stated reason (:func:`_skip`): ``lbctl sandbox``
itself (the test's sandbox stands in), ``lbctl fleet`` (run on local Spark by a test of its own, marked spark), credentials,
files of a real host, a real cluster's broker names.

A ``console`` block of docs/ is a session: its ``$ lbctl`` lines run in order on a fresh sandbox
(``> FILE`` written for the next line, the sandbox's ``127.0.0.1:8080``… standing for the test
cluster's brokers), and an output quoted whole under a command that reads a bundled example must
be what lbctl prints. README's sessions are run by tests/apply/test_readme_walkthrough.py.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import TestCluster, hot_cluster
from lbctl.sandbox.scenarios import SCENARIOS
from tests.docs_pages import DOCS, PAGES

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
# a block may be indented (inside a list item): its closing fence is indented alike
_BLOCK = re.compile(r"^( *)```sh\n(?P<body>.*?)^\1```", re.S | re.M)
_CUT = {"&&", "||", ";", "|", ">", ">>", "&", "2>&1", "<"}


def _lines(block: str) -> list[str]:
    return [x for x in re.sub(r"\\\n\s*", " ", block).splitlines() if x.strip()]


def _pieces(line: str) -> list[list[str]]:
    try:
        tokens = shlex.split(line, comments=True)
    except ValueError:  # a quoted value spread over lines (README's OAuth2 example): not a command
        return []
    out: list[list[str]] = [[]]
    for t in tokens:
        if t in _CUT:
            out.append([])
        else:
            out[-1].append(t)
    return [p for p in out if p and (p[0] == "lbctl" or p[0].endswith("/bin/lbctl"))]


def _skip(args: list[str], line: str) -> str | None:
    if args[:1] == ["sandbox"]:
        return "the test's sandbox stands in for `lbctl sandbox`"
    if "fleet" in args[:1]:
        return "needs Spark (test_documented_fleet_commands_run runs it on local Spark)"
    if any(a.startswith(("--auth", "--tls")) for a in args):
        return "needs credentials of a real cluster"
    if "--prometheus-url" in args or any(a.startswith("--prometheus-url=") for a in args):
        return "needs the cluster's Prometheus (tests/sources/test_prometheus_*.py run a real one)"
    if "$(" in line:
        return "shell substitution"
    if any(re.match(r"^/(etc|pulsar|certs|shared|data)\b", a) for a in args):
        return "a file of a real host"
    if any(a.startswith(("--install-completion", "--show-completion")) for a in args):
        return "installs into the shell"
    for a in args:
        if a in _UNWRITTEN and a not in _written(args):
            return f"reads {a}, which a skipped line writes ({_UNWRITTEN[a]})"
    files = [a for a in args if a.endswith((".json", ".yaml", ".jsonl", ".gz"))]
    if not files and any("pulsar.svc" in a or re.match(r"^broker-\d+:\d+$", a) for a in args):
        return "names a real cluster's broker"
    return None


def _written(args: list[str]) -> list[str]:
    """The files a command writes (``-f FILE`` / ``--file FILE``)."""
    return [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-f", "--file")]


#: files written by lines that are skipped: a later line reading one is skipped too
_UNWRITTEN: dict[str, str] = {}


def _commands() -> list[tuple[str, str]]:
    """(source:line, the command line) of every lbctl line of every sh block."""
    out = []
    for src in SOURCES:
        text = src.read_text()
        for m in _BLOCK.finditer(text):
            lineno = text[: m.start()].count("\n") + 2
            for line in _lines(textwrap.dedent(m.group("body"))):
                for piece in _pieces(line):
                    reason = _skip(piece[1:], line)
                    if reason:
                        _UNWRITTEN.update(dict.fromkeys(_written(piece[1:]), reason))
                if _pieces(line):
                    out.append((f"{src.relative_to(ROOT)}:{lineno}", line))
    return out


COMMANDS = _commands()


@pytest.fixture(scope="module")
def sandbox() -> Iterator[TestCluster]:
    # the bundles `lbctl sandbox` serves by default (12 per broker, alive), with fixed figures:
    # a documented bundle range must exist on the sandbox a reader starts
    c = SCENARIOS["hot-broker"].start(3, 0, alive=True)
    yield c
    c.stop()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("docs")
    shutil.copytree(ROOT / "lbctl" / "examples", d / "examples")
    # the one file the docs read that a documented line writes (`snapshot export -f snap.json`),
    # whatever order the lines run in; every other example reads a file that exists
    shutil.copyfile(d / "examples" / "hot-broker.json", d / "snap.json")
    return d


def _live_args(args: list[str], url: str) -> list[str]:
    args = list(args)
    if "--admin-url" in args:
        i = args.index("--admin-url")
        del args[i:i + 2]
    if "monitor-brokers" in args and not {"--once", "--count", "-n"} & set(args):
        args.append("--once")  # a monitor refreshes until Ctrl-C
    if "--watch" in args and "--count" not in args:
        args += ["--count", "1"]  # a watch follows the leader until Ctrl-C
    return ["--admin-url", url, *args]


@pytest.mark.live
@pytest.mark.parametrize("where,line", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_documented_command_runs(where: str, line: str, sandbox: TestCluster, workdir: Path,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("LBCTL_JOURNAL", str(workdir / "journal.jsonl"))
    monkeypatch.setenv("LBCTL_CONTEXTS", str(workdir / "contexts.json"))
    monkeypatch.delenv("PULSAR_CLIENT_CONF", raising=False)
    ran = 0
    for piece in _pieces(line):
        args = piece[1:]
        reason = _skip(args, line)
        if reason:
            continue
        res = CliRunner().invoke(app, _live_args(args, sandbox.admin_url),
                                 env={"COLUMNS": "80"})
        # doctor's exit 1 is a finished check that found a warning, as on the sandbox a reader
        # starts (docs/exit-codes.md)
        ok = {0, 1} if args[:1] == ["doctor"] else {0}
        assert res.exit_code in ok, f"{where}: {line}\n{res.stderr}{res.stdout[-2000:]}"
        ran += 1
    if not ran:
        pytest.skip(_skip(_pieces(line)[0][1:], line) or "nothing to run")


_CONSOLE = re.compile(r"^( *)```console\n(?P<body>.*?)^\1```", re.S | re.M)
_EXIT = re.compile(r"#.*\bexit (\d+)\b")
#: contexts a skipped `context add` names: a later line using one is skipped too
_UNADDED: dict[str, str] = {}


def _console_lines(block: str) -> list[str]:
    """The ``$ lbctl`` commands of a ``console`` block (a trailing ``\\`` joins the next line);
    the lines under them are output."""
    out: list[str] = []
    lines = block.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.startswith("$ "):
            continue
        cmd = line[2:]
        while cmd.endswith("\\") and i < len(lines):
            cmd = cmd[:-1] + " " + lines[i].strip()
            i += 1
        if _pieces(cmd):
            out.append(cmd)
    return out


def _session_skip(args: list[str], line: str) -> str | None:
    """:func:`_skip`'s reasons, and a context that names a cluster other than the sandbox (or
    one that a skipped line adds)."""
    reason = _skip(args, line)
    if reason:
        tokens = shlex.split(line, comments=True)
        out = [tokens[tokens.index(">") + 1]] if ">" in tokens[:-1] else []
        _UNWRITTEN.update(dict.fromkeys([*_written(args), *out], reason))
        if args[:2] == ["context", "add"] and len(args) > 2:
            _UNADDED[args[2]] = reason
        return reason
    if args[:2] == ["context", "add"] and len(args) > 2:
        url = next((a.split("=", 1)[-1] if a.startswith("--admin-url=") else args[k + 1]
                    for k, a in enumerate(args[:-1]) if a.startswith("--admin-url")), "")
        if url and not re.match(r"https?://(localhost|127\.0\.0\.1)[:/]", url):
            _UNADDED[args[2]] = "a real cluster's URL"
            return _UNADDED[args[2]]
    for k, a in enumerate(args):
        used = args[k + 1] if a == "--context" and k + 1 < len(args) else None
        if args[:2] == ["context", "use"] and k == 2:
            used = a
        if used in _UNADDED:
            return f"uses context {used}, which a skipped line adds ({_UNADDED[used]})"
    return None


def _sessions() -> list[tuple[str, list[str]]]:
    """(source:line, its commands) of every console block of docs/ that has ``$ lbctl`` lines:
    a session, run in order on one sandbox (README's two sessions are run by
    tests/apply/test_readme_walkthrough.py, with the checks their prose makes)."""
    out = []
    for src in sorted(DOCS.rglob("*.md")):
        text = src.read_text()
        for m in _CONSOLE.finditer(text):
            lines = _console_lines(textwrap.dedent(m.group("body")))
            if lines:
                lineno = text[: m.start()].count("\n") + 2
                out.append((f"{src.relative_to(ROOT)}:{lineno}", lines))
    return out


SESSIONS = _sessions()


@pytest.mark.live
@pytest.mark.parametrize("where,lines", SESSIONS, ids=[w for w, _ in SESSIONS])
def test_documented_session_runs(where: str, lines: list[str], workdir: Path,
                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each console block's ``$ lbctl`` lines, in order, on a fresh sandbox like the one the
    page's reader starts: the sandbox's broker names (``127.0.0.1:8080``…) stand for the test
    cluster's, ``> FILE`` writes the file a later line reads, ``~`` is a home of the test's own,
    and each line exits as its comment says (``exit N``), else 0 (doctor: 0 or 1)."""

    shutil.copytree(workdir / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for var in ("XDG_STATE_HOME", "LBCTL_JOURNAL", "PULSAR_CLIENT_CONF"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LBCTL_CONTEXTS", str(tmp_path / "contexts.json"))
    # the sandbox's hot broker with its figures fixed (`lbctl sandbox --static`): one unload to
    # apply, so that a documented --interval 30 costs no wait, and no leader acting meanwhile
    c = hot_cluster(3)
    c.set_reassignment(delay=0.05)
    ran = 0
    elsewhere = ""  # a session on a real cluster: the lines after one naming it act there too
    try:
        ids = list(c.brokers)
        for line in lines:
            for i, b in enumerate(ids):
                line = line.replace(f"127.0.0.1:{8080 + i}", b)
            for piece in _pieces(line):
                args = [os.path.expanduser(a) for a in piece[1:]]
                reason = _session_skip(args, line)
                if reason and ("real cluster" in reason or "real host" in reason):
                    elsewhere = reason
                if reason or elsewhere:
                    continue
                tokens = shlex.split(line, comments=True)
                out = tokens[tokens.index(">") + 1] if ">" in tokens else None
                res = CliRunner().invoke(app, _live_args(args, c.admin_url),
                                         env={"COLUMNS": "80"})
                want = _EXIT.search(line)
                ok = ({int(want.group(1))} if want else
                      {0, 1} if args[:1] == ["doctor"] else {0})
                assert res.exit_code in ok, \
                    f"{where}: {line}\n{res.stderr}{res.stdout[-2000:]}"
                if out:
                    Path(out).write_text(res.stdout)
                ran += 1
    finally:
        c.stop()
    if not ran:
        pytest.skip("no line can run here")


def _shown_outputs() -> list[tuple[str, str, list[str]]]:
    """(source:line, command, the output printed under it) of the console blocks' commands that
    read a bundled example, which print the same on every machine."""
    out = []
    for src in sorted([ROOT / "README.md", *DOCS.rglob("*.md")]):
        text = src.read_text()
        for m in _CONSOLE.finditer(text):
            lineno = text[: m.start()].count("\n") + 2
            block = textwrap.dedent(m.group("body")).splitlines()
            for k, line in enumerate(block):
                if not line.startswith("$ lbctl ") or "examples/" not in line:
                    continue
                shown = []
                for after in block[k + 1:]:
                    if after.startswith("$ "):
                        break
                    shown.append(after)
                if any(x.strip() for x in shown) and not any("…" in x for x in shown):
                    out.append((f"{src.relative_to(ROOT)}:{lineno + k}", line[2:], shown))
    return out


SHOWN = _shown_outputs()


@pytest.mark.parametrize("where,line,shown", SHOWN, ids=[w for w, _, _ in SHOWN])
def test_documented_output_is_what_lbctl_prints(where: str, line: str, shown: list[str],
                                                workdir: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """An output quoted whole under its command is what lbctl prints for it, at the width it
    was shown at (its widest line, at least 80 columns): a page cannot drift from lbctl."""
    monkeypatch.chdir(workdir)
    width = max(80, *(len(x) for x in shown))
    res = CliRunner().invoke(app, shlex.split(line, comments=True)[1:],
                             env={"COLUMNS": str(width), "NO_COLOR": "1"})
    assert res.exit_code in (0, 1), f"{where}: {line}\n{res.stderr}"
    assert res.stdout.rstrip("\n").splitlines() == [x.rstrip() for x in shown], where


def _fleet_lines() -> list[tuple[str, list[str]]]:
    """The documented `lbctl fleet` lines a local Spark can run (not a Prometheus, not a
    cluster's shared storage), in document order, each command shape once: the output
    directory (``/tmp/…``) is the test's own."""
    out, seen = [], set()
    for where, line in COMMANDS:
        for piece in _pieces(line):
            args = piece[1:]
            if args[:1] != ["fleet"] or any(a.startswith("--prometheus-url") for a in args):
                continue
            if any(re.match(r"^/(shared|data)\b", a) for a in args):
                continue
            args = ["OUT" if re.match(r"^/tmp/[\w.-]+$", a) else a for a in args]
            if tuple(args) not in seen:
                seen.add(tuple(args))
                out.append((where, args))
    return out


@pytest.mark.spark
@pytest.mark.slow
def test_documented_fleet_commands_run(workdir: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The fleet lines the other runners skip ("needs Spark"), on local Spark: ingest, report,
    ingest --report and whatif on the bundled examples/fleet, as fleet.md and README give them."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("needs Java 17 or later")
    pytest.importorskip("pyspark")
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("LBCTL_SPARK_CLASS_CACHE", "off")
    lines = _fleet_lines()
    assert {a[1] for _, a in lines} >= {"ingest", "report", "whatif"}
    for where, args in lines:
        args = [str(tmp_path / "fleet") if a == "OUT" else a for a in args]
        res = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
        assert res.exit_code == 0, f"{where}: lbctl {' '.join(args)}\n{res.stderr[-2000:]}"


def test_the_documentation_runs_many_commands() -> None:
    assert len(COMMANDS) >= 60  # the runner found the blocks (a broken regex finds none)
    assert len(SESSIONS) >= 8 and SHOWN  # so did the console blocks' runner
    # a block indented inside a list item is found too (recommend.md's --watch)
    assert any(where.startswith("docs/commands/recommend.md") and "--watch" in line
               for where, line in COMMANDS)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_generated_page_is_current(name: str) -> None:
    assert (DOCS / name).read_text() == PAGES[name](), \
        f"docs/{name} is stale: run python tests/docs_pages.py"


def test_every_command_has_a_page() -> None:
    import typer.main

    group = typer.main.get_command(app)
    pages = "\n".join(p.read_text() for p in (DOCS / "commands").glob("*.md"))
    for name in group.commands:  # type: ignore[attr-defined]
        assert re.search(rf"^# .*\blbctl {name}\b", pages, re.M), \
            f"no docs/commands page for lbctl {name}"


def test_nothing_refers_outside_the_project() -> None:
    bad = re.compile(r"\.\./shared|/work/shared|/work/main")
    files = [ROOT / "README.md", *DOCS.rglob("*.md"), *(ROOT / "lbctl").rglob("*.py"),
             *(ROOT / "tests").rglob("*.py"), *(ROOT / "lbctl" / "examples").rglob("*.md")]
    hits = [f"{f.relative_to(ROOT)}: {m.group(0)}" for f in files
            if f.name != "test_docs.py" for m in [bad.search(f.read_text())] if m]
    assert not hits


def test_index_links_resolve() -> None:
    for page in DOCS.rglob("*.md"):
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} -> {target}"
