"""Every example lbctl shows can be pasted into a shell as it is (walk23).

The examples of every command's ``--help`` and every ``lbctl`` line of the ``sh`` and ``console``
blocks of README.md and docs/ (docs/commands/ included), those the documentation runner skips
(fleet, Prometheus, credentials, a real cluster's names) too, are read as a POSIX shell reads
them:

* :mod:`shlex` must split the line (no quote left open);
* nothing a shell would glob is left unquoted (``*``, ``?``, ``[``) except a file pattern the
  example means (``examples/*.json``): ``--master local[8]`` is a glob, an error in zsh ("no
  matches found") and a different word in bash when a file ``local8`` exists; nor a bracket, a
  brace or ``<``/``>`` placeholder a shell takes for syntax or a redirection;
* each ``lbctl`` piece (cut at ``&&``, ``||``, ``;``, ``|``, redirections) must parse: the
  command line with ``--help`` appended goes through lbctl's own parser, every command's body
  replaced by one that fails, so an unknown command or option, or an option left without its
  value (which would take ``--help`` as its value and run), fails the example.
"""

from __future__ import annotations

import re
import shlex
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
import typer.testing
from typer.testing import CliRunner

from lbctl.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(r"^( *)```(?P<lang>sh|console|bash|shell)\n(?P<body>.*?)^\1```", re.S | re.M)
_SEPARATORS = {"&&", "||", ";", "|", "&"}
_REDIRECTS = {">", ">>", "<", "2>", "2>>", "&>", "2>&1"}


def _walk(cmd: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    yield path, cmd
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        if not getattr(sub, "hidden", False):
            yield from _walk(sub, [*path, name])


def _open_quote(text: str) -> bool:
    try:
        shlex.split(text, comments=True)
    except ValueError:
        return True
    return False


def _logical(lines: list[str]) -> Iterator[str]:
    """Lines with a trailing ``\\`` joined to the next, and a quoted value that runs over lines
    (a JSON of README's) kept with its newlines, as a shell reads them."""
    cur = ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        if _open_quote(cur) and line is not lines[-1]:
            cur += "\n"
            continue
        yield cur.strip()
        cur = ""
    if cur:
        yield cur.strip()


def _help_examples() -> list[tuple[str, str]]:
    """(``lbctl CMD --help``, the example) of every command's Examples section."""
    out = []
    runner = CliRunner()
    for path, _ in _walk(typer.main.get_command(app), []):
        text = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"}).stdout
        lines = text.splitlines()
        starts = [i for i, x in enumerate(lines) if x.strip() == "Examples:"]
        for i in starts:
            block = []
            for x in lines[i + 1:]:
                if x.strip() and not x.startswith(" "):
                    break
                block.append(x)
            for line in _logical(block):
                if _open_quote(line) or _pieces(line):
                    out.append((f"lbctl {' '.join(path)} --help".replace("  ", " "), line))
    return out


def _doc_examples() -> list[tuple[str, str]]:
    """(file:line, the command) of every lbctl line of the sh and console blocks."""
    out = []
    for src in SOURCES:
        text = src.read_text()
        for m in _BLOCK.finditer(text):
            lineno = text[: m.start()].count("\n") + 2
            body = textwrap.dedent(m.group("body")).splitlines()
            if m.group("lang") == "console":  # a session: its commands start with "$ "
                cmds, cur = [], None
                for x in body:
                    if cur is not None and cur.endswith("\\"):
                        cur = cur[:-1] + " " + x.strip()
                    else:
                        if cur is not None:
                            cmds.append(cur)
                        cur = x[2:] if x.startswith("$ ") else None
                if cur is not None:
                    cmds.append(cur)
            else:
                cmds = list(_logical(body))
            for line in cmds:
                if _open_quote(line) or _pieces(line):
                    out.append((f"{src.relative_to(ROOT)}:{lineno}", line))
    return out


def _unquoted(line: str) -> Iterator[tuple[str, str]]:
    """(word, its unquoted characters) of each shell word of ``line``, up to a comment."""
    word, bare, quote, i = "", "", "", 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == quote:
                quote = ""
            elif ch == "\\" and quote == '"' and i + 1 < len(line):
                word += line[i + 1]
                i += 1
            else:
                word += ch
        elif ch in "'\"":
            quote = ch
        elif ch == "\\" and i + 1 < len(line):
            word += line[i + 1]
            i += 1
        elif ch.isspace():
            if word:
                yield word, bare
            word, bare = "", ""
        elif ch == "#" and not word:
            break
        else:
            word += ch
            bare += ch
        i += 1
    if word:
        yield word, bare


def _shell_trouble(line: str) -> str | None:
    """What a shell would do to ``line`` that its author did not mean, or None."""
    try:
        shlex.split(line, comments=True)
    except ValueError as e:
        return f"the shell cannot read it: {e}"
    for word, bare in _unquoted(line):
        if word.startswith("$(") or bare.startswith("$("):
            continue  # a command substitution: the shell's own syntax
        # a file pattern the example means is a path whose last part holds a '*' only
        meant = (re.fullmatch(r"[\w.~/-]*/[\w.*-]*\*[\w.*-]*", word) is not None
                 and "?" not in bare and "[" not in bare)
        if re.search(r"[*?\[]", bare) and not meant:
            return f"{word!r} is a glob to the shell: quote it"
        if re.search(r"[{}()]", bare) or (re.search(r"[<>]", bare) and bare not in _REDIRECTS
                                          and not re.fullmatch(r"\d?>>?(&\d)?\S*", bare)):
            return f"{word!r} holds shell syntax: quote it"
    return None


def _pieces(line: str) -> list[list[str]]:
    """The ``lbctl`` commands of a shell line, each as its arguments (after ``lbctl``)."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
    lex.whitespace_split = True
    lex.commenters = "#"
    tokens = list(lex)
    out: list[list[str]] = [[]]
    skip = False
    for t in tokens:
        if skip:
            skip = False
            continue
        if t in _SEPARATORS:
            out.append([])
        elif t in _REDIRECTS or re.fullmatch(r"[<>&]+", t):
            skip = not t.endswith("&") or t == ">"
            if out[-1] and re.fullmatch(r"\d", out[-1][-1]):
                out[-1].pop()  # 2> FILE
        else:
            out[-1].append(t)
    return [p[1:] for p in out if p and (p[0] == "lbctl" or p[0].endswith("/bin/lbctl"))]


HELP = _help_examples()
DOCS = _doc_examples()


@pytest.fixture
def parse_only(monkeypatch: pytest.MonkeyPatch) -> Any:
    """lbctl's command tree with every command's body replaced by one that fails: a line parses
    (``--help`` shown, exit 0) or fails, and nothing ever runs."""
    root = typer.main.get_command(app)

    def ran(*args: object, **kwargs: object) -> None:
        raise AssertionError("the command ran: --help was taken as an option's value")

    for _, cmd in _walk(root, []):
        if not hasattr(cmd, "commands"):
            monkeypatch.setattr(cmd, "callback", ran)
    monkeypatch.setattr(typer.testing, "_get_command", lambda _app: root)
    for var in ("PULSAR_CLIENT_CONF", "PULSAR_HOME", "LBCTL_CONTEXT"):
        monkeypatch.delenv(var, raising=False)
    return root


def _check(line: str) -> None:
    trouble = _shell_trouble(line)
    assert trouble is None, f"{line}\n{trouble}"
    pieces = _pieces(line)
    assert pieces, f"no lbctl command in {line!r}"
    for args in pieces:
        if any("$(" in a for a in args[:1]):
            continue
        r = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "80"})
        shown = r.stdout.startswith("Usage: lbctl") or args == ["--version"]
        assert r.exit_code == 0 and shown, (
            f"{line}\nlbctl {shlex.join(args)} --help: exit {r.exit_code}\n"
            f"{r.stderr or r.stdout}{r.exception!r}")


def test_there_are_many_examples() -> None:
    assert len(HELP) >= 60 and len(DOCS) >= 150, (len(HELP), len(DOCS))


@pytest.mark.parametrize(("where", "line"), HELP, ids=[f"{w}:{i}" for i, (w, _) in
                                                        enumerate(HELP)])
def test_help_example_pastes(where: str, line: str, parse_only: Any) -> None:
    _check(line)


@pytest.mark.parametrize(("where", "line"), DOCS, ids=[f"{w}:{i}" for i, (w, _) in
                                                        enumerate(DOCS)])
def test_documented_example_pastes(where: str, line: str, parse_only: Any,
                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LBCTL_CONTEXTS", str(tmp_path / "contexts.json"))
    _check(line)


@pytest.mark.parametrize("line", [
    "lbctl fleet ingest /data --out /data/fleet --master local[8]",
    "lbctl unload <bundle>",
    "lbctl apply plan.json --yes --reason 'CHG-1",
    "lbctl apply --resume",  # --help taken as the journal: the command would run
    "lbctl recomend snap.json",
    "lbctl recommend snap.json --no-such-flag",
    "lbctl assign-preview --topic persistent://a/b/* --snapshot s.json",
    "lbctl plans list {a,b}",
    "lbctl --auth-plugin AuthenticationTls --auth-params tlsCertFile:/c.pem,tlsKeyFile:/k.pem …",
])
def test_a_broken_example_fails(line: str, parse_only: Any) -> None:
    """The checks can fail: each of these would break when pasted."""
    with pytest.raises(AssertionError):
        _check(line)


@pytest.mark.parametrize("line", [
    "lbctl snapshot validate examples/*.json examples/*.yaml",
    "lbctl fleet ingest /data --out /data/fleet --master 'local[8]'",
    'lbctl recommend "$(lbctl examples --path)/hot-broker.json"',
    "lbctl doctor -o json > findings.json || echo \"needs attention\"",
    "lbctl snapshot export -f - | gzip > snap.json.gz",
    "lbctl watch --heal out-of-band=approve      # then: lbctl plans list",
    "lbctl --auth-plugin AuthenticationOAuth2 --auth-params '{\"type\": \"a\",\n  \"b\": 1}' brokers",
    "lbctl --admin-url http://pulsar:8080 unload public/default -b 0x40000000_0x80000000",
])
def test_a_good_example_passes(line: str, parse_only: Any) -> None:
    _check(line)
