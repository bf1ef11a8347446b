"""The four tables' rows from natively parsed snapshots (column expressions; no Python per row).

Input: validated lines (:func:`lbctl.fleet.native.line_checks`) joined with their ``config`` and
``namespaces`` tables (:mod:`lbctl.fleet.sections`): ``source``, ``text``, ``s`` (the snapshot
struct), ``cluster``, ``captured_at``, ``load_manager``, ``owned`` and the thresholds, weights
and namespace boundaries. Output: DataFrames with exactly the columns and values
:func:`lbctl.fleet.rows.snapshot_rows` gives for the same snapshot (the tests compare the two
paths on the same files).
"""

from __future__ import annotations

from typing import Any

from lbctl.fleet import _compat
from lbctl.fleet.native import finite_or_null, java_max, ns_part, percent, stats_type
from lbctl.fleet.rows import table_schema

DAY_MS = 86_400_000


def _F() -> Any:
    return _compat.functions()


def stats_of(b: Any) -> Any:
    """``lastStats``, or the ``bundleStats`` older brokers wrote when there is no ``lastStats``."""
    return _F().coalesce(b["lastStats"], b["bundleStats"])


def sum_of(values: Any, field: str, kind: str) -> Any:
    """``field`` summed over an array of structs left to right, as Java's ``+=`` (absent = 0):
    ``LocalBrokerData.update``'s aggregates of a report that lacks them."""
    F = _F()

    def add(acc: Any, x: Any) -> Any:
        return acc + F.coalesce(x[field], F.lit(0)).cast(kind)

    return F.aggregate(F.coalesce(values, F.array()), F.lit(0).cast(kind), add)


def select_table(df: Any, table: str) -> Any:
    """The table's columns, in order, cast to their types."""
    F = _F()
    if "date" not in df.columns:
        df = with_date(df)
    return df.select(*[F.col(name).cast(t).alias(name) for name, t in table_schema(table)])


def with_date(df: Any) -> Any:
    """``date``: the UTC day of ``captured_at`` (``rows.utc_date``)."""
    F = _F()
    day = F.date_from_unix_date(F.floor(F.col("captured_at") / DAY_MS).cast("int"))
    return df.withColumn("date", F.date_format(day, "yyyy-MM-dd"))


def snapshots(lines: Any) -> Any:
    F = _F()
    s = F.col("s")
    topics = s["topics"]
    df = (lines
          .withColumn("brokers", F.size(s["brokers"]))
          .withColumn("bundles", F.size("owned"))
          .withColumn("topics", F.when(topics.isNull(), 0).otherwise(F.size(topics)))
          .withColumn("raw", F.col("text")))
    return select_table(df, "snapshots")


def _broker_level(lines: Any) -> Any:
    """One row per broker per snapshot, with ``b`` (the report) and its aggregates resolved."""
    F = _F()
    df = lines.select("*", F.explode(F.map_entries(F.col("s")["brokers"])).alias("e"))
    df = df.withColumn("broker", F.col("e")["key"]).withColumn("b", F.col("e")["value"])
    b = F.col("b")
    st = stats_of(b)
    values = F.coalesce(F.map_values(st), F.array().cast(f"array<{stats_type().simpleString()}>"))
    # LocalBrokerData.update: missing aggregates are sums over lastStats, left to right
    for key, col in (("msgRateIn", "msg_rate_in"), ("msgRateOut", "msg_rate_out"),
                     ("msgThroughputIn", "msg_throughput_in"),
                     ("msgThroughputOut", "msg_throughput_out")):
        df = df.withColumn(col, F.coalesce(b[key], sum_of(values, key, "double")))
    for key, stat, col in (("numTopics", "topics", "num_topics"),
                           ("numConsumers", "consumerCount", "num_consumers"),
                           ("numProducers", "producerCount", "num_producers")):
        df = df.withColumn(col, F.coalesce(b[key], sum_of(values, stat, "long")))
    owned = F.when(st.isNotNull(), F.size(st)) \
        .otherwise(F.size(F.coalesce(b["bundles"], F.array().cast("array<string>"))))
    return df.withColumn("num_bundles", F.coalesce(b["numBundles"], owned)) \
        .withColumn("owner_bundles", owned)


def brokers(lines: Any) -> Any:
    F = _F()
    df = _broker_level(lines)
    b = F.col("b")
    for key, col in (("cpu", "cpu"), ("memory", "memory"), ("directMemory", "direct_memory"),
                     ("bandwidthIn", "bandwidth_in"), ("bandwidthOut", "bandwidth_out")):
        df = df.withColumn(col, percent(b[key]))
    usage = [F.col(c) for c in ("cpu", "direct_memory", "bandwidth_in", "bandwidth_out")]
    weights = [F.col(c) for c in ("w_cpu", "w_direct_memory", "w_bandwidth_in",
                                  "w_bandwidth_out")]
    df = df.withColumn("max_usage", finite_or_null(java_max(*usage) / 100))
    df = df.withColumn("weighted_max_usage", finite_or_null(
        java_max(*[u * w for u, w in zip(usage, weights, strict=True)]) / 100))
    return select_table(df, "brokers")


def bundles(lines: Any) -> Any:
    F = _F()
    df = _broker_level(lines)
    b = F.col("b")
    st = stats_of(b)
    entry = f"struct<key: string, value: {stats_type().simpleString()}>"
    no_stats = F.transform(F.coalesce(b["bundles"], F.array().cast("array<string>")),
                           lambda n: F.struct(n.alias("key"),
                                              F.lit(None).cast(stats_type()).alias("value")))
    entries = F.when(st.isNotNull(), F.map_entries(st)).otherwise(no_stats.cast(f"array<{entry}>"))
    df = (df.withColumn("owner_throughput",
                        F.col("msg_throughput_in") + F.col("msg_throughput_out"))
          .drop("msg_rate_in", "msg_rate_out", "msg_throughput_in", "msg_throughput_out")
          .select("*", F.explode(entries).alias("x")))
    v = F.col("x")["value"]
    df = (df.withColumn("bundle", F.col("x")["key"])
          .withColumn("namespace", ns_part(F.col("bundle")))
          .withColumn("topics", F.coalesce(v["topics"], F.lit(0))))
    return select_table(_with_stats(df, v), "bundles")


def _with_stats(df: Any, stats: Any) -> Any:
    """The rate, throughput and client-count columns of a bundle's or a topic's stats struct
    (absent = 0), as :func:`lbctl.fleet.rows.snapshot_rows` writes them."""
    F = _F()
    return (df.withColumn("msg_rate_in", F.coalesce(stats["msgRateIn"], F.lit(0.0)))
            .withColumn("msg_rate_out", F.coalesce(stats["msgRateOut"], F.lit(0.0)))
            .withColumn("msg_throughput_in", F.coalesce(stats["msgThroughputIn"], F.lit(0.0)))
            .withColumn("msg_throughput_out", F.coalesce(stats["msgThroughputOut"], F.lit(0.0)))
            .withColumn("consumers", F.coalesce(stats["consumerCount"], F.lit(0)))
            .withColumn("producers", F.coalesce(stats["producerCount"], F.lit(0))))


def _range_of(name: Any) -> tuple[Any, Any]:
    F = _F()
    lo = F.conv(name.substr(F.length(name) - 18, F.lit(8)), 16, 10).cast("long")
    hi = F.conv(name.substr(F.length(name) - 7, F.lit(8)), 16, 10).cast("long")
    return lo, hi


def topics(lines: Any) -> Any:
    F = _F()
    df = lines.filter(F.col("s")["topics"].isNotNull())
    df = df.select("*", F.explode(F.map_entries(F.col("s")["topics"])).alias("e"))
    t = F.col("e")["value"]
    topic = F.col("e")["key"]
    after = topic.substr(F.instr(topic, "://") + 3, F.length(topic))
    last = F.substring_index(after, "/", -1)
    ns = after.substr(F.lit(1), F.length(after) - F.length(last) - 1)
    df = (df.withColumn("topic", topic).withColumn("namespace", ns)
          .withColumn("h", F.crc32(F.col("topic").cast("binary"))))
    h = F.col("h")
    bounds = F.element_at(F.col("ns_bounds"), F.col("namespace"))
    idx = F.least(F.aggregate(bounds, F.lit(-1), lambda acc, x: acc + F.when(x <= h, 1)
                              .otherwise(0)), F.size(bounds) - 2)
    located = F.format_string("%s/0x%08x_0x%08x", F.col("namespace"),
                              F.element_at(bounds, idx + 1), F.element_at(bounds, idx + 2))

    def holds(n: Any) -> Any:
        lo, hi = _range_of(n)
        return ((ns_part(n) == F.col("namespace")) & (lo <= h)
                & ((h < hi) | ((hi == 0xFFFFFFFF) & (h <= hi))))

    owned = F.element_at(F.filter(F.col("owned"), holds), 1)
    df = df.withColumn("bundle", F.when(bounds.isNotNull(), located).otherwise(owned))
    return select_table(_with_stats(df, t), "topics")
