"""``mixed-cluster``: brokers of one cluster running different load managers or Pulsar versions.

The modular and the extensible load managers keep their state in different places (load reports
under ``/loadbalance/brokers`` vs the ``loadbalancer-broker-load-data`` system topic, ownership in
ZooKeeper vs the service-unit state channel, PIP-192): brokers of the two kinds do not see each
other's load and can both own, or both refuse, a bundle — the migration has to be done in one
switch of every broker (error). Brokers on different releases apply different balancing rules
(defaults, strategy fixes: see ``lbctl`` version profiles) while the leader decides for all — a
rolling upgrade in progress (warning). The facts come from each broker (live: its runtime
configuration and ``/brokers/version``; a snapshot: each load report's ``brokerVersionString``
and ``loadManagerClassName``).
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, listing, short


def _groups(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for broker, value in pairs:
        out.setdefault(value, []).append(broker)
    return out


def _shown(groups: dict[str, list[str]]) -> str:
    return "; ".join(f"{k} on {len(v)} ({listing(v, 3)})"
                     for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1])))


@rule("mixed-cluster", Severity.WARNING,
      title="Brokers running different load managers or Pulsar versions",
      source="PIP-192",
      why="the leader balances every broker by its own release's rules, and brokers of the "
          "other load manager neither report to it nor follow its decisions (PIP-192).",
      fix="finish the rolling upgrade or the load-manager switch on every broker")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    managers = _groups([(f.broker, short(f.load_manager)) for f in ctx.facts if f.load_manager])
    if len(managers) > 1:
        yield r.finding(
            f"{len(managers)} load managers in one cluster: {_shown(managers)}",
            severity=Severity.ERROR,
            why="the modular and the extensible load managers keep load and ownership in "
                "different stores, so the two kinds of broker do not see each other's load and "
                "disagree on who owns a bundle (PIP-192).",
            fix="set the same loadManagerClassName on every broker (a switch between the two "
                "needs a restart of the whole cluster; compare first: "
                + ctx.compare_fix("ThresholdShedder", "TransferShedder") + ")",
            brokers=[b for v in managers.values() for b in v], settings=("loadManagerClassName",))
    versions = _groups([(f.broker, f.version) for f in ctx.facts if f.version])
    if len(versions) > 1:
        yield r.finding(
            f"{len(versions)} Pulsar versions in one cluster: {_shown(versions)}",
            fix="finish the rolling upgrade; lbctl models one release at a time "
                "(--pulsar-version picks which)",
            brokers=[b for v in versions.values() for b in v])
