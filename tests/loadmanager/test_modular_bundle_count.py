"""The plan's bundle count (``Plan.bundles``) comes from the cycle's bundle data plus the listed
names outside a broker's own ``lastStats`` (:func:`lbctl.loadmanager.modular._bundle_count`); it
must equal ``ClusterState.bundle_count`` (every name a broker reports or lists) on any state."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.loadmanager.select import Options, plans
from lbctl.records import replace
from lbctl.sources.snapshot import parse_snapshot

T0 = "2026-11-21T22:00:00Z"
NAMES = [f"t/ns{n}/0x{k * 0x10000000:08x}_0x{(k + 1) * 0x10000000 - 1:08x}"
         for n in range(3) for k in range(8)]


def _snapshot(owned: list[int], listed_only: list[int], reorder: bool) -> dict:
    """Bundles dealt to three brokers: each owned one in a broker's ``lastStats`` (and its
    ``bundles``), each listed-only one in a broker's ``bundles`` alone."""
    brokers: dict[str, dict] = {}
    for i in range(3):
        brokers[f"b{i}:8080"] = {"cpu": {"usage": 10.0 + 40 * i, "limit": 100.0},
                                 "lastStats": {}, "bundles": []}
    for j, n in enumerate(owned):
        b = brokers[f"b{j % 3}:8080"]
        b["lastStats"][NAMES[n]] = {"msgRateIn": 10.0 * j, "msgThroughputIn": 1000.0 * j}
        b["bundles"].append(NAMES[n])
    for j, n in enumerate(listed_only):
        brokers[f"b{(j + 1) % 3}:8080"]["bundles"].append(NAMES[n])
    if reorder:
        for b in brokers.values():
            b["bundles"].reverse()
    return {"format": "lbctl/snapshot@1", "cluster": "c", "capturedAt": T0, "brokers": brokers}


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.integers(0, len(NAMES) - 1), unique=True, max_size=len(NAMES)),
       st.data(), st.booleans())
def test_the_plans_bundle_count_is_every_reported_or_listed_name(
        owned: list[int], data: st.DataObject, reorder: bool) -> None:
    rest = [n for n in range(len(NAMES)) if n not in owned]
    listed_only = data.draw(st.lists(st.sampled_from(rest), unique=True) if rest
                            else st.just([]))
    state = parse_snapshot(_snapshot(owned, listed_only, reorder), "t.json")
    plan = plans([state], Options())[0]
    assert plan.bundles == state.bundle_count() == len(owned) + len(listed_only)
    # the reader's name index counted them; without it, the cycle counts them itself
    bare = replace(state, names=None)
    assert bare.name_index() is None and state.name_index() is not None
    assert plans([bare], Options())[0].bundles == bare.bundle_count() == plan.bundles
