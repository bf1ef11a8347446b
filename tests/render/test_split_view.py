"""The split preview's table adds up: children, then what is not attributed, then the parent."""

from __future__ import annotations

import re

from lbctl.config import Settings
from lbctl.loadmanager.split_preview import SplitRequest, preview
from lbctl.render.display import Display, using
from lbctl.render.split_view import SplitView
from lbctl.sources.snapshot import read_snapshots
from tests.paths import EXAMPLES


def _text(example: str, request: SplitRequest) -> str:
    st = read_snapshots([EXAMPLES / example])[-1]
    with using(Display(width=80)):
        return SplitView(preview(st, Settings.defaults(), request)).to_text()


def test_no_zero_topic_children_under_a_parent_with_topics() -> None:
    text = _text("hot-broker.json", SplitRequest("acme/billing", bundle="0xc0000000_0xffffffff"))
    children = [ln for ln in text.splitlines() if ln.startswith("acme/billing/")]
    assert len(children) == 2
    assert all(re.search(r"\s\?\s+\?\s+\?\s", ln) for ln in children), children  # unknown, not 0
    rest = next(ln for ln in text.splitlines() if ln.startswith("not attributed"))
    parent = next(ln for ln in text.splitlines() if ln.startswith("= parent"))
    assert rest.split()[-3:] == parent.split()[-3:] == ["20", "8,835.0", "34.51"]
    assert "lists none of the parent's 20 topics" in text


def test_children_that_add_up_end_with_the_parent_alone() -> None:
    text = _text("flow-or-qps.json", SplitRequest("my-tenant/my-ns", bundle_type="HOT",
                                                  algorithm="topic_count_equally_divide"))
    assert "not attributed" not in text.lower()
    parent = next(ln for ln in text.splitlines() if ln.startswith("= parent"))
    assert parent.split()[-3:] == ["6", "2,100.0", "210.00"]
