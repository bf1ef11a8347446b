"""Write the expected facts of the cases without a golden file, from today's outputs.

    python -m tests.make_output_facts          # from the project root

For each such case it runs the JSON form of the command line (the case itself, or the same line
with ``-o json``) and stores :func:`tests.output_facts.facts` of it, with the exit code and stderr
when they are not 0 and empty, under the JSON line's name in ``tests/data/outputs/<command>.json``.
Every format of a line shares that entry; the script checks that each of them ends the same way.

Run it when a change means to alter what lbctl decides, and review the difference like code.
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

from tests.cli_cases import CASES, GOLDEN_CASES, command, run, scenario, with_format
from tests.output_facts import FACTS_DIR, facts, facts_path


def _entry(cmd: str, args: list[str]) -> dict[str, Any]:
    out = run(with_format(args, "json"))
    if out.exit_code != 0:
        return {"exit": out.exit_code, "stderr": out.stderr}
    entry = facts(cmd, json.loads(out.stdout))
    if out.stderr:
        entry["stderr"] = out.stderr
    return entry


def dumps(obj: Any, indent: str = "") -> str:
    """JSON with one line per small object (an action, a broker, a move): short diffs in review."""
    flat = json.dumps(obj, ensure_ascii=False)
    if not isinstance(obj, dict | list) or len(indent) + len(flat) <= 100 or not obj:
        return flat
    values = obj.values() if isinstance(obj, dict) else obj
    if len(flat) <= 200 and not any(isinstance(v, dict | list) and v for v in values):
        return flat
    inner = indent + " "
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(k)}: {dumps(v, inner)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + f"\n{indent}}}"
    return "[\n" + ",\n".join(inner + dumps(v, inner) for v in obj) + f"\n{indent}]"


def main() -> None:
    by_command: dict[str, dict[str, Any]] = defaultdict(dict)
    for name, args in sorted(CASES.items()):
        if name in GOLDEN_CASES:
            continue
        cmd, key = command(args), scenario(args)
        if key not in by_command[cmd]:
            by_command[cmd][key] = _entry(cmd, args)
        want = by_command[cmd][key]
        out = run(args)
        assert out.exit_code == want.get("exit", 0), f"{name}: exit {out.exit_code} vs its JSON's"
        assert out.stderr == want.get("stderr", ""), f"{name}: stderr differs from its JSON's"
    FACTS_DIR.mkdir(parents=True, exist_ok=True)
    for cmd, entries in sorted(by_command.items()):
        text = dumps(dict(sorted(entries.items())))
        facts_path(cmd).write_text(text + "\n")
        print(f"{cmd}: {len(entries)} scenario(s)")


if __name__ == "__main__":
    main()
