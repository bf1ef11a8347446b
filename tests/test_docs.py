"""The documentation cannot rot: generated pages equal their sources, every command has a page,
nothing refers outside the project, and every command line of the README's and docs/' ``sh``
blocks runs — against the bundled examples and a sandbox cluster — and succeeds.

How a ``sh`` block is run: each logical line (``\\`` continuations joined, comments dropped) is
cut at ``&&``, ``;``, ``|``, ``>`` and ``&``; every piece that starts with ``lbctl`` (or
``.venv/bin/lbctl``) is run in-process in a directory holding a copy of the examples, with the
sandbox's ``--admin-url`` and ``COLUMNS=80``. Other programs (pip, sleep, spark-submit) are not
run. Lines that cannot run here are skipped for a stated reason (:func:`_skip`): ``lbctl sandbox``
itself (the test's sandbox stands in), ``lbctl fleet`` (Spark has its own tests), credentials,
files of a real host, a real cluster's broker names.
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from lbctl.cli.app import app
from lbctl.sandbox import TestCluster
from lbctl.sandbox.scenarios import SCENARIOS
from tests.docs_pages import DOCS, PAGES

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
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
        return "needs Spark (tests/fleet runs the fleet commands)"
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
    if not files and any("pulsar.svc" in a for a in args):
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
            for line in _lines(m.group(1)):
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


def test_the_documentation_runs_many_commands() -> None:
    assert len(COMMANDS) >= 60  # the runner found the blocks (a broken regex finds none)


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
