"""Re-validation verdicts, offline: a LiveView built from a snapshot-like state."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from lbctl.apply.live import LiveView, usage_of
from lbctl.apply.planfile import PlannedAction
from lbctl.apply.validate import CHANGED, GONE, SKIPPED, VALID, validate
from lbctl.config import resolve
from lbctl.model.cluster import ClusterState
from tests.factories import MB, _bundles, _scenario

MOD = "org.apache.pulsar.broker.loadbalance.impl.ModularLoadManagerImpl"


def _live(state: ClusterState, **cls: str) -> LiveView:
    from lbctl.records import replace

    bounds = {}
    for b in state.owners():
        ns = b.rsplit("/", 1)[0]
        bounds.setdefault(ns, set()).update(int(x, 16) for x in b.rsplit("/", 1)[1].split("_"))
    state = replace(state, namespaces=MappingProxyType({k: tuple(sorted(v))
                                                        for k, v in bounds.items()}))
    settings = resolve(state.config, {}, {})
    return LiveView(state.cluster, list(state.brokers), state, settings, state.owners(),
                    usage_of(state, settings), MOD, dict(cls))


def _state() -> ClusterState:
    return _scenario({"b0:8080": 0.5, "b1:8080": 0.2, "b2:8080": 0.9},
                     {"b0:8080": _bundles("t/ns", 4, 10 * MB, 1000)})


def _unload(step: int, bundle: str, src: str = "b0:8080", dst: str | None = "b1:8080",
            **kw: Any) -> PlannedAction:
    return PlannedAction(step=step, action="unload", bundle=bundle, broker=src, destination=dst,
                         **kw)


B = [f"t/ns/0x{i * 0x40000000:08x}_0x{min((i + 1) * 0x40000000, 0xFFFFFFFF):08x}"
     for i in range(4)]


def test_verdicts() -> None:
    live = _live(_state(), **{"b1:8080": MOD})
    acts = [
        _unload(1, B[0]),
        _unload(2, B[1], src="b1:8080", dst=None),  # owner changed
        _unload(3, B[2], dst="b2:8080"),  # destination overloaded (90 %)
        _unload(4, B[3], dst="b9:8080"),  # destination not active
        _unload(5, "t/ns/0x00000000_0x20000000"),  # merged since (B[0] holds it now)
        _unload(6, "t/ns/0x00000000_0x80000000"),  # split since (into B[0] and B[1])
        _unload(7, "t/gone/0x00000000_0xffffffff"),
        _unload(8, B[0], skipped="no broker"),
        _unload(9, B[0], dst="b0:8080", src="b1:8080"),  # already on the "destination"
        _unload(10, B[1], dst=None),  # to the next lookup's choice
    ]
    v = validate(acts, live)
    got = [(x.status, x.why) for x in v]
    assert [s for s, _ in got] == [VALID, CHANGED, CHANGED, CHANGED, GONE, GONE, GONE, SKIPPED,
                                   CHANGED, VALID]
    assert "owned by b0:8080 now, not b1:8080" in got[1][1]
    assert "overloaded now (90.0% >= 85%)" in got[2][1]
    assert "not an active broker" in got[3][1]
    assert "merged into a larger bundle" in got[4][1]
    assert "split since into 2 bundles" in got[5][1] and "not found" in got[6][1]
    assert "already owned by the destination" in got[8][1]
    rb = validate([_unload(3, B[2], dst="b2:8080")], live, rollback=True)[0]
    assert rb.status == VALID and "a rollback returns the bundle anyway" in rb.why


def test_load_manager_class_and_grace_period() -> None:
    live = _live(_state(), **{"b1:8080": "com.example.OtherLoadManager"})
    assert "runs OtherLoadManager" in validate([_unload(1, B[0])], live)[0].why
    live = _live(_state())
    v = validate([_unload(1, B[0])], live, recent_unloads={B[0]: 1000.0}, now=1600.0)[0]
    assert v.status == CHANGED and "10 min ago" in v.why and "--force" in v.why
    assert validate([_unload(1, B[0])], live, recent_unloads={B[0]: 1000.0}, now=1600.0,
                    force=True)[0].status == VALID
    assert validate([_unload(1, B[0])], live, recent_unloads={B[0]: 1000.0}, now=1600.0,
                    exempt_grace=True)[0].status == VALID
    assert validate([_unload(1, B[0])], live, recent_unloads={B[0]: 1000.0},
                    now=1000.0 + 31 * 60)[0].status == VALID


class _Counting(Mapping[str, Any]):
    def __init__(self, m: Mapping[str, Any]):
        self.m = m
        self.gets = 0

    def __getitem__(self, k: str) -> Any:
        return self.m[k]

    def get(self, k: str, default: Any = None) -> Any:
        self.gets += 1
        return self.m.get(k, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.m)

    def __len__(self) -> int:
        return len(self.m)


def test_many_actions_read_each_namespace_once() -> None:
    """30,000 actions over a 30,000-bundle namespace: the boundaries are turned into ranges once
    (a scan per action would be 9·10⁸ comparisons)."""
    from lbctl.records import replace

    n = 30_000
    step = 0xFFFFFFFF // n
    bounds = tuple(i * step for i in range(n)) + (0xFFFFFFFF,)
    names = [f"t/big/0x{a:08x}_0x{b:08x}" for a, b in zip(bounds, bounds[1:], strict=False)]
    live = _live(_state())
    counting = _Counting({"t/big": bounds})
    live.state = replace(live.state, namespaces=counting)  # type: ignore[arg-type]
    live.owners.update(dict.fromkeys(names, "b0:8080"))
    v = validate([_unload(i + 1, b) for i, b in enumerate(names)], live)
    assert all(x.status == VALID for x in v)
    assert counting.gets == 1
