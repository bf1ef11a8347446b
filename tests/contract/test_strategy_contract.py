"""The contract every registered strategy keeps, checked over every scenario.

Parametrised from the registries, so a new shedder, placement or split algorithm is covered the day
it registers: Pulsar's short and fully qualified names resolve to it; its docstring names its Pulsar
class; it reads only the settings it declares (and those exist); it is deterministic (under a seed
where Pulsar picks at random); it does no I/O; and the plan a load manager builds with it is valid
plan@1 that never moves a bundle to its own owner or touches a system namespace.
(cruise-control's ``OptimizationVerifier`` idea, over lbctl's named scenarios and examples.)
"""

from __future__ import annotations

import builtins
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from random import Random

import pytest

from lbctl.config import SETTINGS_BY_NAME, Settings, resolve
from lbctl.explain.words import text
from lbctl.loadmanager.loaddata import build_load_data, update_bundle_data
from lbctl.loadmanager.select import Options, run
from lbctl.model.bundle import BundleRange, is_system_service_namespace, namespace_of, topic_hash
from lbctl.model.cluster import ClusterState, TopicStats
from lbctl.sources.snapshot import read_snapshots
from lbctl.strategies.base import PlacementRequest
from lbctl.strategies.builtin import PLACEMENT, SHEDDING, SPLIT
from lbctl.strategies.split.base import option_for
from tests.factories import SCENARIOS
from tests.plan_contract import check_plan

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = [p for p in sorted((ROOT / "examples").iterdir())
            if p.suffix in (".json", ".yaml", ".jsonl")]


def _states(paths: list[Path]) -> dict[str, list[ClusterState]]:
    out = {name: [make()] for name, make in SCENARIOS.items()} if paths is EXAMPLES else {}
    for p in paths:
        out[p.name] = read_snapshots([p])
    return out


STATES = _states(EXAMPLES)  # modular clusters: named scenarios and the bundled examples
EXTENSIBLE = _states([p for p in sorted((ROOT / "examples" / "extensible").iterdir())
                      if p.suffix in (".json", ".jsonl")])


@pytest.fixture
def no_io(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any file or network access from here on fails the test."""
    def refuse(*_a: object, **_k: object) -> None:
        raise AssertionError("a strategy did I/O")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    yield


def _names(registry: object) -> list[str]:
    return registry.names()  # type: ignore[attr-defined, no-any-return]


# --- every kind ---------------------------------------------------------------------------------
@pytest.mark.parametrize("registry, name", [(r, n) for r in (SHEDDING, PLACEMENT, SPLIT)
                                            for n in r.names()],
                         ids=lambda x: getattr(x, "kind", x))
def test_registered_by_pulsar_names(registry, name: str) -> None:
    qualified = registry.qualified_name(name)
    assert qualified.startswith("org.apache.pulsar.") and qualified.endswith("." + name)
    assert registry.short_name(name) == name
    assert registry.short_name(qualified) == name
    strategy = registry.create(name)
    module = sys.modules[type(strategy).__module__]
    doc = (type(strategy).__doc__ or "") + (module.__doc__ or "")
    java_class = name if registry is not SPLIT else type(strategy).__name__
    assert java_class.split("_")[0] in doc or name in doc, f"{name}: no docstring naming it"
    unknown = set(registry.reads(name)) - set(SETTINGS_BY_NAME)
    assert not unknown, f"{name} declares unknown settings {unknown}"


# --- shedding -----------------------------------------------------------------------------------
@pytest.mark.parametrize("scenario", sorted(STATES))
@pytest.mark.parametrize("name", _names(SHEDDING))
def test_shedder_contract(name: str, scenario: str, no_io: None) -> None:
    states = STATES[scenario]
    declared = set(SHEDDING.reads(name))
    runs = []
    for _ in range(2):  # twice from scratch: the same decisions
        strategy = SHEDDING.create(name)
        memory = strategy.initial_memory()
        decisions = []
        for st in states:
            settings = resolve(st.config)
            load = build_load_data(st, update_bundle_data(st))
            decision, memory = strategy.shed(load, settings, memory)
            read = set(settings.read_values())
            assert read <= declared, f"{name} read undeclared settings {read - declared}"
            owners = st.owners()
            for sel in decision.selections:
                assert owners.get(sel.bundle) == sel.broker, f"{sel.bundle} is not {sel.broker}'s"
                assert not is_system_service_namespace(namespace_of(sel.bundle)), sel.bundle
                assert sel.destination != sel.broker
            for v in decision.brokers.values():
                assert v.label is None or v.reason is not None, f"{v.broker}: a label without reason"
            reasons = (*decision.notes, *(v.why for v in decision.brokers.values()),
                       *(c.why for c in decision.candidates))
            assert all(r is None or text(r) for r in reasons), f"{name}: a reason without words"
            decisions.append(decision)
        runs.append(decisions)
    assert runs[0] == runs[1]


@pytest.mark.parametrize("name, scenario",
                         [(n, s) for n in _names(SHEDDING) for s in sorted(STATES)]
                         + [("TransferShedder", s) for s in sorted(EXTENSIBLE)])
def test_shedder_plans_are_plan_v1(name: str, scenario: str) -> None:
    placement = {"AvgShedder": "AvgShedder", "TransferShedder": None}.get(
        name, "LeastLongTermMessageRate")
    states = STATES.get(scenario) or EXTENSIBLE[scenario]
    results = run(states, Options(strategy=name, placement=placement))
    for r in results:
        plan = r.plan().to_dict()
        check_plan(plan)
        owners = r.state.owners()
        for a in plan["actions"]:
            if a["action"] != "split" and owners:
                assert owners.get(a["bundle"], a["broker"]) == a["broker"]


# --- placement ----------------------------------------------------------------------------------
@pytest.mark.parametrize("scenario", sorted(STATES))
@pytest.mark.parametrize("name", _names(PLACEMENT))
def test_placement_contract(name: str, scenario: str, no_io: None) -> None:
    st = STATES[scenario][-1]
    load = build_load_data(st, update_bundle_data(st))
    bundles = list(load.bundle_data)[:8]
    declared = set(PLACEMENT.reads(name))
    planned = {b: next(iter(load.brokers)) for b in bundles} if name == "AvgShedder" else {}

    def picks(seed: int) -> list[object]:
        strategy = PLACEMENT.create(name)
        memory = strategy.initial_memory()
        rng = Random(seed)
        out = []
        for b in bundles:
            settings = Settings.defaults()
            decision, memory = strategy.select(PlacementRequest(
                list(load.brokers), b, load, settings, rng, load.bundle_data[b], planned), memory)
            read = set(settings.read_values())
            assert read <= declared, f"{name} read undeclared settings {read - declared}"
            assert decision.broker is None or decision.broker in load.brokers
            assert text(decision.why), f"{name}: a placement without words"
            out.append(decision)
        return out

    assert picks(7) == picks(7)


# --- split algorithms ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", _names(SPLIT))
def test_split_algorithm_contract(name: str, no_io: None) -> None:
    algorithm = SPLIT.create(name)
    assert algorithm.name == name
    # the broker's default algorithm decides what the option carries (flow_or_qps: per-topic stats)
    settings = Settings.defaults().with_values(defaultNamespaceBundleSplitAlgorithm=name,
                                               loadBalancerNamespaceBundleMaxMsgRate=100)
    everything = [f"persistent://t/ns/topic-{i}" for i in range(40)]
    stats = {t: TopicStats(msgRateIn=10.0 * (i + 1), msgThroughputIn=1e6 * (i + 1))
             for i, t in enumerate(everything)}
    for lower, upper in ((0, 0xFFFFFFFF), (0x40000000, 0x80000000), (0x10, 0x13)):
        rng = BundleRange(lower, upper)
        topics = tuple(t for t in everything if rng.contains(topic_hash(t)))  # the bundle's own
        option = option_for(rng, topics, stats, settings, (lower + (upper - lower) // 3,))
        first, second = algorithm.boundaries(option), algorithm.boundaries(option)
        assert first == second
        for b in first.boundaries or ():
            assert rng.lower < b < rng.upper, f"{name}: boundary outside {rng}"
        assert first.why
