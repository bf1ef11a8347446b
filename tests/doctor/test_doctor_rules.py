"""Every doctor rule fires on a real file that has its trap and stays silent on one that does not.

The files are under tests/data/doctor: ``base.json`` is a healthy 4-broker modular cluster (no
finding at all); each trap is a variant of it — a snapshot (state traps) or a broker.conf applied
on top of it (configuration traps), sometimes with the Pulsar release that has the trap.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lbctl.doctor.base import Severity
from lbctl.doctor.builtin import RULES
from lbctl.doctor.run import diagnose
from lbctl.errors import DoctorStatus
from lbctl.loadmanager.select import Options
from lbctl.sources.snapshot import read_snapshots
from tests.paths import DATA

D = DATA / "doctor"
BASE = "base.json"


def run(snapshot: str = BASE, conf: str | None = None, version: str | None = None,
        **overrides: str):
    opts = Options(overrides=overrides or None, broker_conf=D / conf if conf else None,
                   pulsar_version=version)
    return diagnose(read_snapshots([D / snapshot]), opts)


def rules_of(report) -> dict[str, list[Severity]]:
    out: dict[str, list[Severity]] = {}
    for f in report.findings:
        out.setdefault(f.rule, []).append(f.severity)
    return out


#: rule → (a case that triggers it, its worst severity there, a close case that does not)
CASES: dict[str, tuple[dict, Severity, dict]] = {
    "avg-shedder-key": ({"conf": "avg-shedder-half.conf", "version": "3.3.1",
                         "loadBalancerPlacementStrategy": "x.LeastLongTermMessageRate"},
                        Severity.ERROR, {"conf": "avg-shedder-half.conf", "version": "3.3.1"}),
    "avg-shedder-unload-percentage": ({"conf": "avg-shedder.conf"}, Severity.WARNING,
                                      {"conf": "avg-shedder-half.conf"}),
    "bandwidth-key-spelling": ({"conf": "bandwidth-correct-spelling.conf", "version": "3.3.2"},
                               Severity.WARNING,
                               {"conf": "bandwidth-correct-spelling.conf", "version": "4.0.4"}),
    "distribute-evenly": ({"conf": "distribute-evenly.conf"}, Severity.WARNING, {}),
    "load-manager-mismatch": ({"conf": "transfer-shedder-on-modular.conf"}, Severity.ERROR, {}),
    "memory-weights": ({"conf": "memory-weights.conf"}, Severity.WARNING, {}),
    "namespace-bundle-cap": ({"conf": "bundle-cap.conf"}, Severity.WARNING, {}),
    "namespace-few-bundles": ({"snapshot": "few-bundles.json"}, Severity.WARNING, {}),
    "nic-speed": ({"snapshot": "nic-speed.json"}, Severity.WARNING, {}),
    "shedder-placement-mismatch": ({"conf": "threshold-llmr.conf"}, Severity.WARNING, {}),
    "single-hot-topic": ({"snapshot": "single-hot-topic.json"}, Severity.WARNING, {}),
    "stale-load-report": ({"snapshot": "stale-report.json"}, Severity.WARNING, {}),
    "strategy-unavailable": ({"conf": "avg-shedder-half.conf", "version": "3.0.5"},
                             Severity.ERROR, {"conf": "avg-shedder-half.conf", "version": "3.0.6"}),
    "threshold-no-lower-boundary": ({"conf": "no-lower-boundary.conf"}, Severity.INFO, {}),
    "uniform-minimums": ({"conf": "uniform-high-minimums.conf"}, Severity.WARNING,
                         {"conf": "uniform.conf"}),
    "usage-over-100": ({"snapshot": "usage-over-100.json"}, Severity.WARNING, {}),
    "idle-broker": ({"snapshot": "idle-broker.json"}, Severity.WARNING, {}),
    "balancing-disabled": ({"conf": "shedding-disabled.conf"}, Severity.WARNING, {}),
    "mixed-cluster": ({"snapshot": "mixed-load-managers.json"}, Severity.ERROR,
                      {"snapshot": "base.json"}),
    "setting-out-of-range": ({"conf": "out-of-range.conf"}, Severity.ERROR, {}),
    "isolation-primary-unmatched": ({"snapshot": "isolation-port.json"}, Severity.WARNING,
                                    {"snapshot": "isolation-host.json"}),
    "stored-not-dynamic": ({"snapshot": "stored-not-dynamic.json"}, Severity.WARNING,
                           {"snapshot": "dynamic-stored.json"}),
}


def test_every_registered_rule_has_cases() -> None:
    assert set(CASES) == set(RULES.ids())


def test_the_base_cluster_is_healthy() -> None:
    report = run()
    assert report.findings == ()
    assert report.status == DoctorStatus.HEALTHY
    assert report.rules_run == len(RULES)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_triggers(rule: str) -> None:
    case, severity, _ = CASES[rule]
    found = rules_of(run(**case))
    assert rule in found, found
    assert max(found[rule], key=lambda s: s.rank) == severity


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_does_not_trigger(rule: str) -> None:
    _, _, case = CASES[rule]
    assert rule not in rules_of(run(**case))


@pytest.mark.parametrize("rule", sorted(CASES))
def test_finding_is_complete(rule: str) -> None:
    """What was found, why (citing a PR, issue, PIP or Pulsar class) and the fix are all there."""
    case, _, _ = CASES[rule]
    for f in run(**case).findings:
        assert f.found and f.fix and f.source
        assert any(tag in f.why for tag in ("PR #", "PIP-", "#", "ServiceConfiguration", "Impl.")), f.why
        assert f.why.endswith("."), f.why


# --- the cases' details --------------------------------------------------------------------
def test_mixed_versions_is_a_warning_naming_both() -> None:
    (f,) = run("mixed-versions.json").findings
    assert f.rule == "mixed-cluster" and f.severity == Severity.WARNING
    assert "4.0.4 on 3" in f.found and "3.3.1 on 1" in f.found


def test_bandwidth_misspelt_is_info_on_4_0_and_silent_before() -> None:
    got = run(conf="bandwidth-misspelt.conf", version="4.0.4").findings
    assert {f.severity for f in got} == {Severity.INFO}
    assert "deprecated spelling" in got[0].found
    assert not run(conf="bandwidth-misspelt.conf", version="3.3.2").findings


def test_memory_weight_severity_follows_the_release() -> None:
    """Heap weight is read by the modular strategies before 3.0 (PR #19559): warning; after:
    info. Direct memory on 3.0.x is the default (1.0) — the default itself is the trap."""
    old = {f.severity for f in run(conf="memory-weights.conf", version="2.11.4").findings
           if "loadBalancerMemoryResourceWeight" in f.settings}
    new = {f.severity for f in run(conf="memory-weights.conf").findings
           if "loadBalancerMemoryResourceWeight" in f.settings}
    assert old == {Severity.WARNING} and new == {Severity.INFO}
    plain_300 = run(version="3.0.7", loadBalancerDirectMemoryResourceWeight="1.0").findings
    assert any("default of this release" in f.found for f in plain_300)


def test_out_of_range_names_the_range_and_default() -> None:
    got = {f.settings[0]: f for f in run(conf="out-of-range.conf").findings}
    f = got["loadBalancerBrokerOverloadedThresholdPercentage"]
    assert "150" in f.found and "[0, 100]" in f.found and "85" in f.fix
    assert "[0, 1]" in got["maxUnloadPercentage"].found


def test_uniform_minimums_numbers() -> None:
    (f,) = run(conf="uniform-high-minimums.conf").findings
    assert "can never fire" in f.found and "minUnloadMessage 1000000000" in f.found


def test_idle_broker_names_it() -> None:
    (f,) = run("idle-broker.json").findings
    assert f.brokers[0] == "broker-4.pulsar.svc:8080"
    assert "1 of 4 brokers own no bundle" in f.found


def test_extensible_settings_on_modular() -> None:
    (f,) = run(conf="extensible-settings-on-modular.conf").findings
    assert f.rule == "load-manager-mismatch"
    assert "loadBalancerBrokerLoadTargetStd=0.1" in f.found


def test_dynamic_origin_and_fix() -> None:
    """A setting found in the dynamic configuration is said so, and the fix names
    delete-dynamic-config."""
    from lbctl.doctor.run import context_for, run_rules
    from lbctl.records import replace

    stored = {"loadBalancerSheddingEnabled": "false"}
    # a live read: the state carries the stored values, and doctor gets the whole answer too
    states = [replace(st, dynamic_config=stored) for st in read_snapshots([D / BASE])]
    ctx, _ = context_for(states, Options(), dynamic=stored)
    (f,) = [f for f in run_rules(ctx) if f.rule == "balancing-disabled"]
    assert "(dynamic configuration)" in f.found
    assert "delete-dynamic-config --config loadBalancerSheddingEnabled" in f.fix
    # --set beats the stored value, and says so
    ctx, _ = context_for(states, Options(overrides=stored), dynamic=stored)
    (f,) = [f for f in run_rules(ctx) if f.rule == "balancing-disabled"]
    assert "(--set)" in f.found


def test_a_snapshots_dynamic_config_is_the_values_origin() -> None:
    """A snapshot's ``dynamicConfig`` (an export of a live read) is the value in force and its
    origin, as a live doctor run says it: the same resolution (``lbctl.config.of_state``)."""
    from lbctl.doctor.run import context_for

    ctx, _ = context_for(read_snapshots([D / "dynamic-stored.json"]), Options())
    key = "loadBalancerBrokerOverloadedThresholdPercentage"
    assert ctx.value(key) == 80 and ctx.origin(key) == "dynamic configuration"
    assert ctx.stored(key)


def test_a_stored_key_that_is_not_dynamic_is_never_applied() -> None:
    """``BrokerService.configValueChanged`` skips a stored key outside the dynamic fields (at
    start and on every change): the brokers run the runtime configuration's value, doctor says
    the stored one is dead, and the only way out is an edit of /admin/configuration
    (delete-dynamic-config answers 412 for it)."""
    from lbctl.doctor.run import context_for, run_rules

    ctx, _ = context_for(read_snapshots([D / "stored-not-dynamic.json"]), Options())
    assert ctx.value("loadBalancerEnabled") is True
    assert ctx.origin("loadBalancerEnabled") == "default"
    assert not ctx.stored("loadBalancerEnabled")
    (f,) = run_rules(ctx)
    assert f.rule == "stored-not-dynamic" and f.settings == ("loadBalancerEnabled",)
    assert "loadBalancerEnabled=false is stored" in f.found
    assert "the brokers run loadBalancerEnabled=true (default)" in f.found
    assert "/admin/configuration" in f.fix and "rolling restart" in f.fix
    # turned off in broker.conf as well: balancing-disabled must not offer delete-dynamic-config
    ctx, _ = context_for(read_snapshots([D / "stored-not-dynamic.json"]),
                         Options(overrides={"loadBalancerEnabled": "false"}))
    (g,) = [g for g in run_rules(ctx) if g.rule == "balancing-disabled"]
    assert "delete-dynamic-config" not in g.fix


def test_unknown_rule_is_a_usage_error() -> None:
    from lbctl.errors import UsageError

    with pytest.raises(UsageError, match="did you mean idle-broker"):
        diagnose(read_snapshots([D / BASE]), Options(), only=["idle-brokr"])


def test_only_and_skip() -> None:
    r = diagnose(read_snapshots([D / "idle-broker.json"]), Options(), skip=["idle-broker"])
    assert not r.findings and r.rules_run == len(RULES) - 1
    r = diagnose(read_snapshots([D / "idle-broker.json"]), Options(), only=["idle-broker"])
    assert [f.rule for f in r.findings] == ["idle-broker"] and r.rules_run == 1


def test_data_files_are_real_files() -> None:
    assert all(isinstance(p, Path) and p.stat().st_size > 0 for p in D.iterdir())


def test_load_balancer_disabled_says_what_still_runs() -> None:
    """``loadBalancerEnabled=false`` stops the scheduled tasks (``PulsarService``) but not the
    modular manager's splits on a broker change (``ModularLoadManagerImpl.updateAll`` →
    ``checkNamespaceBundleSplit`` does not check it); the extensible ``SplitScheduler`` does. The
    setting is not dynamic (``ServiceConfiguration``): the fix is broker.conf and a restart."""
    from lbctl.doctor.run import context_for, run_rules
    from lbctl.model.cluster import EXTENSIBLE
    from lbctl.records import replace

    states = read_snapshots([D / BASE])
    opts = Options(overrides={"loadBalancerEnabled": "false"})
    ctx, _ = context_for(states, opts)
    (f,) = [f for f in run_rules(ctx) if f.rule == "balancing-disabled"]
    assert f.severity == Severity.ERROR
    assert "no load-management task at all" not in f.found
    assert "bundles are split only when a broker joins or leaves" in f.found
    assert "update-dynamic-config" not in f.fix and "rolling restart" in f.fix

    ext = [replace(s, load_manager=EXTENSIBLE) for s in states]
    ctx, _ = context_for(ext, opts)
    (f,) = [f for f in run_rules(ctx) if f.rule == "balancing-disabled"]
    assert "never sheds nor splits" in f.found


def test_stale_reports_with_load_balancer_disabled_name_it() -> None:
    """With ``loadBalancerEnabled=false`` no modular broker schedules ``LoadReportUpdaterTask``
    (``PulsarService``): old reports are that setting's doing, not a broker that stopped."""
    (f,) = [f for f in run(snapshot="stale-report.json").findings
            if f.rule == "stale-load-report"]
    assert "means it stopped" in f.why and "loadBalancerEnabled" not in f.settings
    (f,) = [f for f in run(snapshot="stale-report.json", loadBalancerEnabled="false").findings
            if f.rule == "stale-load-report"]
    assert "means it stopped" not in f.why and "LoadReportUpdaterTask" in f.why
    assert "loadBalancerEnabled=true in broker.conf" in f.fix
    assert "loadBalancerEnabled" in f.settings


@pytest.mark.parametrize(("version", "words"), [
    ("3.3.9", "sheds with OverloadShedder instead"),
    ("4.0.11", "falls back to SimpleLoadManagerImpl"),
    ("4.0.13", "the broker does not start"),  # PR #26031 from 4.0.12 and 4.2.3
    ("4.2.2", "falls back to SimpleLoadManagerImpl"),
    ("4.2.3", "the broker does not start"),
])
def test_transfer_shedder_on_modular_by_release(version: str, words: str) -> None:
    """Before PR #22827 ``createLoadSheddingStrategy`` falls back to OverloadShedder; from 4.0 it
    fails fast, ``initialize`` throws and ``LoadManager.create`` picks SimpleLoadManagerImpl."""
    (f,) = [f for f in run(conf="transfer-shedder-on-modular.conf", version=version).findings
            if f.rule == "load-manager-mismatch" and "TransferShedder" in f.found]
    assert f.severity == Severity.ERROR
    assert words in f.why


def test_interval_ranges_say_what_pulsar_does_with_zero() -> None:
    """``LoadSheddingTask`` reschedules itself with ``schedule`` (PR #16408), which runs a delay of
    0 at once rather than refusing it; the report interval is an age ``needBrokerDataUpdate``
    compares, not a scheduling period."""
    found = {f.settings[0]: f for f in run(loadBalancerSheddingIntervalMinutes="0",
                                           loadBalancerReportUpdateMaxIntervalMinutes="0").findings
             if f.rule == "setting-out-of-range"}
    shed = found["loadBalancerSheddingIntervalMinutes"]
    report = found["loadBalancerReportUpdateMaxIntervalMinutes"]
    assert "refuses" not in shed.why and "sheds again at once" in shed.why
    assert "refuses" not in report.why and "needBrokerDataUpdate" in report.why


def test_an_isolation_primary_written_with_the_port_matches_no_broker() -> None:
    """A policy whose primary regex names ``host:port`` (isolation-port.json): Pulsar matches the
    host alone, so the policy's namespace goes to its secondary broker only; the finding names
    the regex, the hosts, the broker the namespace goes to and the port."""
    (f,) = run("isolation-port.json").findings
    assert "isolation policy dedicated" in f.found and "'acme/orders'" in f.found
    assert "secondary brokers only (broker-4.pulsar.svc:8080)" in f.found
    assert "names a port" in f.found and f.brokers == ("broker-4.pulsar.svc:8080",)
