"""The planner's lower bound on a limit near the float range (found by hostile20's long sweep in
a CI run): a broker whose CPU limit is 1.7976931348623157e308 has a per-unit cost below 1e-308,
and the fractional bound's gain per unit overflowed in numpy's divide; under the suite's
warnings-as-errors (and any caller who turns warnings into errors) ``propose`` ended in
``internal error: RuntimeWarning: overflow encountered in divide``. The overflow is inf: no
finite gain reaches the band on that broker, as the bound should say."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from lbctl.cli.app import app
from tests.paths import EXAMPLES


def test_propose_on_a_limit_near_the_float_range(tmp_path: Path) -> None:
    snap = json.loads((EXAMPLES / "hot-broker.json").read_text())
    first = next(iter(snap["brokers"].values()))
    first["cpu"]["limit"] = 1.7976931348623157e308
    f = tmp_path / "huge-limit.json"
    f.write_text(json.dumps(snap))
    res = CliRunner().invoke(app, ["propose", str(f)])
    assert "internal error" not in res.stderr, res.stderr
    assert res.exit_code == 0, res.stderr
