"""``nic-speed``: a broker's NIC speed that cannot be right for its traffic.

Pulsar reads the bandwidth limit from ``/sys/class/net/*/speed`` (``LinuxBrokerHostUsageImpl``;
usage and limit in kbit/s), and the bandwidth percentages weigh in every strategy. Three signs the
figure is wrong, each a warning:

* no limit (``limit <= 0``) while the broker carries traffic: no NIC speed could be read, so both
  bandwidth percentages are 0 (#15313 shows such reports);
* the measured NIC usage is below half of what the broker's own message throughput puts through
  it: the interfaces measured are not the ones carrying the traffic (#14820: virtual interfaces);
* brokers reporting limits 10 times apart: a VM reporting its host's 10 Gbit/s while throttled at
  1 Gbit/s (#1149, hence ``loadBalancerOverrideBrokerNicSpeedGbps``, PR #1157) understates
  its bandwidth percentage tenfold.

A live extensible cluster serves no load report: its usages are rebuilt from the published
percentages (limit 100), which say nothing about the NIC, so such brokers are not judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, listing

#: message throughput (bytes/s) → kbit/s as LinuxBrokerHostUsageImpl counts NIC bytes
KBIT = 8 / 1024
SPREAD = 10.0
MEASURED_SHARE = 0.5
#: the limit of a usage rebuilt from the extensible load manager's published percentage
#: (:func:`lbctl.sources.percent_usage.usage_for`): a percentage, not kbit/s
PERCENT_FORM = 100.0


def gbit(kbps: float) -> str:
    return f"{kbps / 1e6:g} Gbit/s"


@rule("nic-speed", Severity.WARNING,
      title="A NIC speed implausible for the broker's traffic",
      source="#1149, PR #1157",
      why="the bandwidth percentages divide the NIC usage by the NIC speed Pulsar detects, and a "
          "wrong speed hides (or invents) bandwidth pressure (#1149).",
      fix="loadBalancerOverrideBrokerNicSpeedGbps=<the NIC's real speed> in broker.conf "
          "(restart)")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    none: list[str] = []
    blind: list[str] = []
    limits: dict[str, float] = {}
    for b, local in ctx.brokers.items():
        traffic = local.msgThroughputIn + local.msgThroughputOut
        lim_in, lim_out = local.bandwidthIn.limit, local.bandwidthOut.limit
        if ctx.extensible and lim_in == lim_out == PERCENT_FORM:
            continue  # rebuilt from brk_lb_* percentages: no kbit/s figure to judge
        if traffic > 0 and (lim_in <= 0 or lim_out <= 0):
            none.append(b)
            continue
        if lim_in > 0:
            limits[b] = lim_in
        need_in, need_out = local.msgThroughputIn * KBIT, local.msgThroughputOut * KBIT
        if (need_in > 0 and local.bandwidthIn.usage < MEASURED_SHARE * need_in) or \
                (need_out > 0 and local.bandwidthOut.usage < MEASURED_SHARE * need_out):
            blind.append(f"{b} (NIC in/out {local.bandwidthIn.usage:,.0f}/"
                         f"{local.bandwidthOut.usage:,.0f} kbit/s for messages of "
                         f"{need_in:,.0f}/{need_out:,.0f} kbit/s)")
    if none:
        yield r.finding(
            f"{len(none)} broker(s) carry traffic but report no NIC speed (bandwidth limit 0): "
            f"{listing(none)}; their bandwidth usage counts as 0 %",
            why="without a NIC speed Pulsar computes no bandwidth percentage, so network pressure "
                "never counts (#15313; loadBalancerOverrideBrokerNicSpeedGbps, PR #1157).",
            source="#15313, PR #1157", brokers=none)
    if blind:
        yield r.finding(
            f"{len(blind)} broker(s) measure less NIC traffic than their messages alone need: "
            f"{listing(blind, 3)}",
            why="Pulsar measures the interfaces it takes for physical ones; when those do not "
                "carry the traffic the bandwidth percentages are understated (#14820).",
            fix="check which interfaces the broker counts (LinuxBrokerHostUsageImpl); set "
                "loadBalancerOverrideBrokerNicSpeedGbps and run the broker with its real NIC",
            source="#14820", brokers=[x.split(" (")[0] for x in blind])
    if len(limits) >= 2:
        lo, hi = min(limits.values()), max(limits.values())
        if hi >= SPREAD * lo:
            fast = [b for b, v in limits.items() if v == hi]
            slow = [b for b, v in limits.items() if v == lo]
            yield r.finding(
                f"NIC speeds differ {hi / lo:g}-fold: {listing(fast, 3)} report {gbit(hi)}, "
                f"{listing(slow, 3)} {gbit(lo)}",
                brokers=fast + slow)
