"""``lbctl snapshot validate -o json`` on every example (the cases no golden file pins): it exits
0 with one row per snapshot in the file, the documented columns, the cluster, time, broker and
bundle counts and load manager stored in ``tests/data/outputs/snapshot-validate.json``.
"""

from __future__ import annotations

import pytest

from tests.output_checks import cases, documented_columns, json_loads, ran, same_facts
from tests.output_facts import facts

TITLE = "snapshot-validate"


@pytest.mark.parametrize("name", cases(TITLE, "json"))
def test_json(name: str) -> None:
    out, want = ran(name)
    rows = json_loads(name, out.stdout)
    for row in rows:
        assert list(row) == documented_columns("snapshot validate"), f"{name}: keys {list(row)}"
    same_facts(name, facts(TITLE, rows), want)
