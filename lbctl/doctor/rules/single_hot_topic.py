"""``single-hot-topic``: a bundle over a split threshold because of one topic.

A topic is the smallest unit a broker serves (#3419): a bundle whose load comes from one topic
cannot be relieved by splitting it. The leader does not even try for a bundle of a single topic
(``BundleSplitterTask`` skips bundles with fewer than 2 topics, PRs #11937 / #12527); with topic
stats in the snapshot, a topic whose own rate or throughput exceeds the bundle limits
(``loadBalancerNamespaceBundleMaxMsgRate``, ``…MaxBandwidthMbytes``) is reported too, as every
split keeps it whole in one child. The fix is to partition the topic.
"""

from __future__ import annotations

from collections.abc import Iterator
from shlex import quote

from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context, listing
from lbctl.model.bundle import topic_namespace
from lbctl.units import mb_s, msg_s

MB = 1024 * 1024


@rule("single-hot-topic", Severity.WARNING,
      title="A bundle over a split threshold because of a single topic",
      source="#3419, PR #11937",
      why="a topic is served by one broker and no split can divide it, so its bundle stays hot "
          "(#3419); the leader does not split a one-topic bundle at all (PR #11937).",
      fix="partition the topic: `pulsar-admin topics create-partitioned-topic TOPIC -p N` (or "
          "update-partitioned-topic) with enough partitions")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    max_rate = float(ctx.value("loadBalancerNamespaceBundleMaxMsgRate"))
    max_tp = float(ctx.value("loadBalancerNamespaceBundleMaxBandwidthMbytes")) * MB
    keys = ("loadBalancerNamespaceBundleMaxMsgRate", "loadBalancerNamespaceBundleMaxBandwidthMbytes")
    lone: list[str] = []
    for local in ctx.brokers.values():
        for bundle, st in local.lastStats.items():
            if st.topics == 1 and (st.msg_rate > max_rate or st.throughput > max_tp):
                lone.append(f"{bundle} ({msg_s(st.msg_rate)}, {mb_s(st.throughput)})")
    if lone:
        yield r.finding(
            f"{len(lone)} bundle(s) of a single topic over the split limits ({max_rate:g} "
            f"msg/s, {mb_s(max_tp)}): {listing(lone, 3)}",
            fix="see which topic it is: "
                + ctx.explain_fix(f"--bundle {quote(lone[0].split(' (')[0])}") + " lists "
                "the bundle's top topics by traffic; then partition that topic "
                "(`pulsar-admin topics create-partitioned-topic TOPIC -p N`)",
            bundles=[x.split(" (")[0] for x in lone], settings=keys)
    hot = sorted((t for t, st in ctx.state.topics.items()
                  if st.msgRateIn + st.msgRateOut > max_rate
                  or st.msgThroughputIn + st.msgThroughputOut > max_tp),
                 key=lambda t: t)
    if hot:
        def figures(t: str) -> str:
            st = ctx.state.topics[t]
            return (f"{t} ({msg_s(st.msgRateIn + st.msgRateOut)}, "
                    f"{mb_s(st.msgThroughputIn + st.msgThroughputOut)})")

        yield r.finding(
            f"{len(hot)} topic(s) alone exceed the bundle split limits ({max_rate:g} msg/s, "
            f"{mb_s(max_tp)}): {listing([figures(t) for t in hot], 3)}",
            fix=f"partition them (`pulsar-admin topics create-partitioned-topic {quote(hot[0])} -p N`, "
                "N ≥ its traffic / the bundle limit)",
            namespaces=sorted({topic_namespace(t) for t in hot}), settings=keys)
