"""Snapshot files parsed and validated by Spark itself: ``spark.read.text`` + ``from_json``.

No Python runs per row here. Each ``.jsonl`` line (or whole ``.json`` file) is decoded by Spark's
JSON reader against an explicit schema of snapshot v1 (:func:`element_schema`) and checked by
SQL predicates that restate :mod:`lbctl.sources.snapshot_schema`'s rules. The design rule is
**the native path accepts a subset of what lbctl's reader accepts, and computes the same rows
for it**; anything it is not sure of goes, as a whole file, to lbctl's own reader
(:mod:`lbctl.fleet.rows`), which either gives exactly the one-line message ``lbctl snapshot
validate`` prints or the rows. Where Spark's JSON reader is laxer than orjson + lbctl, the line
is sent to lbctl:

* **one JSON value per line.** Spark ignores text after the first value, so the line is wrapped as
  ``[LINE, {"<sentinel>": 1}]`` with a sentinel key chosen at random per run: only a line holding
  exactly one value parses into exactly two elements ending with the sentinel;
* **types.** Any field that does not convert (a string where a number is expected, ``5.0`` for
  a count, an object for a number …) makes the whole record null
  (``spark.sql.json.enablePartialResults=false``). Fields whose JSON type matters but which
  Spark would silently turn into text (``cluster``, ``capturedAt``, ``config`` …) are read as
  ``VARIANT`` and their JSON type is checked with ``schema_of_variant``;
* **null vs. absent** look the same to Spark: a line with a ``null`` value goes to lbctl;
* NaN/Infinity literals, single quotes, comments, leading zeros are refused by the reader options;
  numbers too large for a double become infinity and fail the range checks;
* invalid UTF-8 and ``\\uD800``-style surrogate escapes go to lbctl (Spark would replace them);
* duplicate keys in a map (Spark keeps both entries, Python the last) go to lbctl;
* a broker whose ``bundles`` is not a permutation of its ``lastStats`` keys goes to lbctl.

The ``config`` and ``namespaces`` sections are few and repeat from snapshot to snapshot: their
distinct values are validated on the driver by lbctl's own reader (:mod:`lbctl.fleet.sections`)
and joined back, which also yields the thresholds and weights each snapshot resolves to.

Arithmetic follows Pulsar, as :mod:`lbctl.model.load` does: ``ResourceUsage.percentUsage()`` in
32-bit float (a float quotient computed in double and rounded once is the float quotient, and
the product by 100 is exact in double before its rounding), ``LocalBrokerData``'s max that never
lets NaN win, missing aggregates as left-to-right double sums over ``lastStats``.
"""

from __future__ import annotations

import uuid
from typing import Any

from lbctl.fleet import _compat

FORMAT = "lbctl/snapshot@1"
DMAX = 1.7976931348623157e308
INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1
MAX_EPOCH_MS = 253402300799999
MIBI = 1024 * 1024

#: ``BundleName.parse``'s grammar (snapshot_schema's ``_BUNDLE_RE``), anchored for Java's find()
BUNDLE_RE = r"^[^/]+/[^/]+(?:/[^/]+)?/0x[0-9a-f]{8}_0x[0-9a-f]{8}\z"
TOPIC_RE = r"(?s)^(?:non-)?persistent://[^/]+/[^/]+/.+\z"
#: snapshot_schema's ``_RFC3339_RE`` with the parts as groups
RFC3339_RE = (r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})"
              r"(?:\.([0-9]+))?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))\z")
#: a value written as JSON ``null`` (after ``[``, ``:`` or ``,``); a match inside a string only
#: sends the line to lbctl's reader, which is always right
NULL_RE = r"[\[:,][ \t\r\n]*null"
SURROGATE_RE = r"\\u[dD][89abcdefABCDEF]"
_RANGE_TAIL = 22  # len("/0xLLLLLLLL_0xUUUUUUUU")

#: Spark's JSON reader made as strict as JSON (and orjson) is
JSON_OPTIONS = {
    "mode": "PERMISSIVE",
    "allowNonNumericNumbers": "false",
    "allowSingleQuotes": "false",
    "allowComments": "false",
    "allowUnquotedFieldNames": "false",
    "allowNumericLeadingZeros": "false",
    "allowBackslashEscapingAnyCharacter": "false",
    "allowUnquotedControlChars": "false",
}

#: SQL settings the native jobs rely on (set on the session before they run)
SQL_SETTINGS = {
    "spark.sql.json.enablePartialResults": "false",  # one bad field nulls the whole record
    "spark.sql.ansi.enabled": "false",  # Java arithmetic: casts saturate, no exceptions
    "spark.sql.session.timeZone": "UTC",
    # a task writes each cluster/day partition through its own open file instead of sorting
    # all its rows by partition first (a task sees a handful of partitions)
    "spark.sql.maxConcurrentOutputFileWriters": "64",
}


def new_sentinel() -> str:
    return f"__lbctl_end_{uuid.uuid4().hex}"


# ------------------------------------------------------------------------------------------
# the schema
# ------------------------------------------------------------------------------------------
def element_schema(sentinel: str) -> Any:
    """Snapshot v1 as Spark types, plus the sentinel field of the wrapper's second element."""
    T = _compat.types()
    D, L, S, V, B = (T.DoubleType(), T.LongType(), T.StringType(), T.VariantType(),
                     T.BooleanType())

    def struct(*fields: tuple[str, Any]) -> Any:
        return T.StructType([T.StructField(n, t) for n, t in fields])

    res = struct(("usage", D), ("limit", D))
    resources = [(n, res) for n in ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")]
    stats = struct(("msgRateIn", D), ("msgThroughputIn", D), ("msgRateOut", D),
                   ("msgThroughputOut", D), ("consumerCount", L), ("producerCount", L),
                   ("topics", L), ("cacheSize", L))
    broker = struct(
        *resources,
        ("msgRateIn", D), ("msgRateOut", D), ("msgThroughputIn", D), ("msgThroughputOut", D),
        ("numTopics", L), ("numBundles", L), ("numConsumers", L), ("numProducers", L),
        ("bundles", T.ArrayType(S)), ("lastBundleGains", T.ArrayType(S)),
        ("lastBundleLosses", T.ArrayType(S)),
        ("lastStats", T.MapType(S, stats)), ("bundleStats", T.MapType(S, stats)),
        ("lastUpdate", L), ("brokerVersionString", V),
        ("persistentTopicsEnabled", B), ("nonPersistentTopicsEnabled", B),
    )
    tamd = struct(("maxSamples", L), ("numSamples", L), ("msgThroughputIn", D),
                  ("msgThroughputOut", D), ("msgRateIn", D), ("msgRateOut", D))
    bundle_data = struct(("shortTermData", tamd), ("longTermData", tamd), ("topics", L))
    topic = struct(("msgRateIn", D), ("msgRateOut", D), ("msgThroughputIn", D),
                   ("msgThroughputOut", D), ("producerCount", L), ("consumerCount", L))
    bld = struct(*resources, ("msgThroughputIn", D), ("msgThroughputOut", D), ("msgRateIn", D),
                 ("msgRateOut", D), ("msgThroughputEMA", D), ("maxResourceUsage", D),
                 ("weightedMaxEMA", D), ("bundleCount", L), ("topics", L), ("updatedAt", L),
                 ("reportedAt", L), ("reconstructed", T.ArrayType(V)))
    top = struct(("topBundlesLoadData", T.ArrayType(struct(("bundleName", V), ("stats", stats)))),
                 ("reconstructed", T.ArrayType(V)))
    return struct(
        ("format", V), ("cluster", V), ("capturedAt", V), ("loadManager", V), ("config", V),
        ("namespaces", V),
        ("brokers", T.MapType(S, broker)),
        ("bundleData", T.MapType(S, bundle_data)),
        ("topics", T.MapType(S, topic)),
        ("recentlyUnloaded", T.MapType(S, L)),
        ("brokerLoadData", T.MapType(S, bld)),
        ("topBundlesLoadData", T.MapType(S, top)),
        ("recentlyUnloadedBrokers", T.MapType(S, L)),
        (sentinel, L),
    )


def stats_type() -> Any:
    """``NamespaceBundleStats`` as a Spark type."""
    return element_schema("_")["brokers"].dataType.valueType["lastStats"].dataType.valueType


# ------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------
def read_text(spark: Any, line_paths: list[str], whole_paths: list[str]) -> Any:
    """``(uri, text)``: the non-blank lines of ``.jsonl`` files and the whole of ``.json`` files
    (a leading BOM removed, as lbctl's reader does for a whole file)."""
    F = _compat.functions()
    parts = []
    if line_paths:
        # Hadoop's default line reader (it also ends a line at a lone \r, which only JSON
        # whitespace can hold: such a file fails here and lbctl's reader, which splits on \n
        # only, reads it) is much faster than a custom separator
        lines = spark.read.text(line_paths)
        parts.append(lines.select(F.col("_metadata.file_path").alias("uri"),
                                  F.col("value").alias("text")))
    if whole_paths:
        whole = spark.read.text(whole_paths, wholetext=True)
        text = F.when(F.col("value").startswith("\ufeff"), F.expr("substr(value, 2)")) \
            .otherwise(F.col("value"))
        parts.append(whole.select(F.col("_metadata.file_path").alias("uri"), text.alias("text")))
    df = parts[0]
    for p in parts[1:]:
        df = df.unionByName(p)
    # bytes.strip()'s whitespace is Java's \s; most lines start with "{" and need no regex
    return df.filter(F.col("text").startswith("{") | F.col("text").rlike(r"\S"))


def parse(lines: Any, sentinel: str) -> Any:
    """Add ``s`` (the snapshot struct, or null) and ``guard`` (the line is within what the native
    path can decide) to ``(uri, text)`` rows."""
    F = _compat.functions()
    T = _compat.types()
    schema = T.ArrayType(element_schema(sentinel))
    wrapped = F.concat(F.lit("["), F.col("text"), F.lit(f',{{"{sentinel}":1}}]'))
    a = F.from_json(wrapped, schema, JSON_OPTIONS)
    text = F.col("text")
    # contains() is a tight byte loop; the regular expressions run only on the rare hits
    guard = (
        F.expr("is_valid_utf8(text)")
        & ~(text.contains("null") & text.rlike(NULL_RE))
        & ~(text.contains("\\u") & text.rlike(SURROGATE_RE))
    )
    return (lines.withColumn("a", a)
            .withColumn("guard", guard & (F.coalesce(F.size("a"), F.lit(-1)) == 2)
                        & (F.col("a")[1][sentinel] == 1) & F.col("a")[0][sentinel].isNull())
            .withColumn("s", F.col("a")[0]).drop("a"))


def sections_of(lines: Any) -> Any:
    """``(kind, key, json)`` of every line's ``config`` (kind ``c``) and ``namespaces`` (``n``),
    from a parse that reads nothing else (Jackson skips the rest without building it)."""
    F = _compat.functions()
    T = _compat.types()
    V = T.VariantType()
    small = T.StructType([T.StructField("config", V), T.StructField("namespaces", V)])
    s = F.from_json(F.col("text"), small, JSON_OPTIONS)
    cfg = section_json(s["config"])
    nss = section_json(s["namespaces"])
    df = lines.select(cfg.alias("c"), nss.alias("n"))
    return (df.select(F.lit("c").alias("kind"), F.xxhash64("c").alias("key"), F.col("c").alias("json"))
            .unionByName(df.select(F.lit("n").alias("kind"), F.xxhash64("n").alias("key"),
                                   F.col("n").alias("json"))))


def section_json(v: Any) -> Any:
    """A variant section as JSON text (``{}`` when absent): the key of its driver-side check."""
    F = _compat.functions()
    return F.when(v.isNull(), F.lit("{}")).otherwise(F.to_json(v))


# ------------------------------------------------------------------------------------------
# the checks, as column expressions
# ------------------------------------------------------------------------------------------
def _F() -> Any:
    return _compat.functions()


def _rate(x: Any) -> Any:
    """A Java double rate/throughput: absent, or finite and >= 0 (Spark orders NaN above all)."""
    return x.isNull() | ((x >= 0) & (x <= DMAX))


def _finite(x: Any) -> Any:
    return x.isNull() | (_F().abs(x) <= DMAX)


def _count(x: Any, top: int = INT_MAX) -> Any:
    return x.isNull() | ((x >= 0) & (x <= top))


def _epoch(x: Any) -> Any:
    return x.isNull() | ((x >= 0) & (x <= MAX_EPOCH_MS))


def _schema_of(v: Any) -> Any:
    return _F().call_function("schema_of_variant", v)


def _is_string(v: Any) -> Any:
    return _schema_of(v) == "STRING"


def _vstring(v: Any) -> Any:
    return _F().call_function("variant_get", v, _F().lit("$"), _F().lit("string"))


def _distinct_keys(m: Any) -> Any:
    F = _F()
    return m.isNull() | (F.size(F.array_distinct(F.map_keys(m))) == F.size(m))


def _name_ok(n: Any) -> Any:
    """A full bundle name: the grammar, and lower < upper (fixed-width lower-case hex)."""
    F = _F()
    return n.rlike(BUNDLE_RE) & (F.substring(n, -19, 8) < F.substring(n, -8, 8))


def _names_ok(arr: Any) -> Any:
    F = _F()
    return arr.isNull() | (F.forall(arr, _name_ok)
                           & (F.size(F.array_distinct(arr)) == F.size(arr)))


# Checks over many values at once use Spark's native array functions on a field pulled out of an
# array of structs (``stats.msgRateIn`` is the array of every bundle's rate): higher-order
# functions (forall, aggregate) run interpreted, element by element, and are kept for the few
# rules that need them (names, per-broker sets).
def _all(arr: Any, lo: float, hi: float) -> Any:
    """Every non-null element of a numeric array within [lo, hi] (NaN fails: Spark orders it
    above everything)."""
    F = _F()
    return F.coalesce((F.array_min(arr) >= lo) & (F.array_max(arr) <= hi), F.lit(True))


def _no_nulls(arr: Any) -> Any:
    F = _F()
    return F.coalesce(F.size(F.array_compact(arr)) == F.size(arr), F.lit(True))


def _stats_all_ok(stats: Any, counts_top: int = INT_MAX) -> Any:
    """Every ``NamespaceBundleStats`` of an array: rates finite >= 0, counts in range."""
    f = stats.getField
    ok = _all(f("msgRateIn"), 0, DMAX) & _all(f("msgThroughputIn"), 0, DMAX)
    ok = ok & _all(f("msgRateOut"), 0, DMAX) & _all(f("msgThroughputOut"), 0, DMAX)
    ok = ok & _all(f("consumerCount"), 0, counts_top) & _all(f("producerCount"), 0, counts_top)
    return ok & _all(f("topics"), 0, LONG_MAX) & _all(f("cacheSize"), 0, LONG_MAX)


def _resources_ok(structs: Any) -> Any:
    """Each of the five ``{usage, limit}`` of an array of structs holding them: finite."""
    ok = _F().lit(True)
    for r in RESOURCES:
        res = structs.getField(r)
        ok = ok & _all(res.getField("usage"), -DMAX, DMAX) & _all(res.getField("limit"), -DMAX,
                                                                  DMAX)
    return ok


RESOURCES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")
BROKER_RATES = ("msgRateIn", "msgRateOut", "msgThroughputIn", "msgThroughputOut")


def stats_of(b: Any) -> Any:
    """``lastStats``, or the ``bundleStats`` older brokers wrote when there is no ``lastStats``."""
    return _F().coalesce(b["lastStats"], b["bundleStats"])


def _brokers_ok(brokers: Any) -> Any:
    """Every ``LocalBrokerData`` of the snapshot (``brokers`` is the map)."""
    F = _F()
    b = F.map_values(brokers)
    ok = _resources_ok(b)
    for k in BROKER_RATES:
        ok = ok & _all(b.getField(k), 0, DMAX)
    for k in ("numTopics", "numBundles", "numConsumers", "numProducers"):
        ok = ok & _all(b.getField(k), 0, INT_MAX)
    ok = ok & _all(b.getField("lastUpdate"), 0, MAX_EPOCH_MS)
    return ok & F.forall(b, _broker_sets_ok)


def _broker_sets_ok(b: Any) -> Any:
    """What is checked broker by broker: its bundle sets, version string, sums that fit."""
    F = _F()
    st = stats_of(b)
    # the owned set: lbctl's reader allows ``bundles`` to differ from the stats' keys; the
    # native path takes the usual case (the same set, or no stats at all) and leaves the rest
    ok = (b["bundles"].isNull() | st.isNull()
          | (F.array_sort(b["bundles"]) == F.array_sort(F.map_keys(st))))
    ok = ok & _names_ok(b["lastBundleGains"]) & _names_ok(b["lastBundleLosses"])
    ok = ok & (b["brokerVersionString"].isNull() | _is_string(b["brokerVersionString"]))
    # missing aggregates are sums; a sum past a Java long cannot be stored (lbctl's rows fail)
    values = F.map_values(st)
    for k in ("topics", "consumerCount", "producerCount"):
        top = F.coalesce(F.array_max(values.getField(k)), F.lit(0)).cast("double")
        ok = ok & (st.isNull() | (top * F.size(st) < 9.2e18))
    return ok


def sum_of(values: Any, field: str, kind: str) -> Any:
    """``field`` summed over an array of structs left to right, as Java's ``+=`` (absent = 0)."""
    F = _F()

    def add(acc: Any, x: Any) -> Any:
        return acc + F.coalesce(x[field], F.lit(0)).cast(kind)

    return F.aggregate(F.coalesce(values, F.array()), F.lit(0).cast(kind), add)


def owned_names(s: Any) -> Any:
    """Every bundle a broker owns, brokers in file order (``ClusterState.owners()``'s order)."""
    F = _F()
    return F.flatten(F.transform(F.map_values(s["brokers"]),
                                 lambda b: F.coalesce(F.map_keys(stats_of(b)), b["bundles"],
                                                      F.array().cast("array<string>"))))





def all_stats(s: Any) -> Any:
    """Every bundle's ``NamespaceBundleStats`` of the snapshot, brokers in order."""
    F = _F()
    empty = F.array().cast(f"array<{stats_type().simpleString()}>")
    return F.flatten(F.transform(F.map_values(s["brokers"]),
                                 lambda b: F.coalesce(F.map_values(stats_of(b)), empty)))


def _count_array(arr: Any, top: int) -> Any:
    return _all(arr, 0, top)


def _tamds_ok(t: Any) -> Any:
    """``TimeAverageMessageData`` of an array of bundle data: required, maxSamples > 0 and
    required, numSamples <= maxSamples, rates finite >= 0."""
    F = _F()
    ms, ns = t.getField("maxSamples"), t.getField("numSamples")
    return (_no_nulls(t) & _no_nulls(ms) & _all(ms, 1, INT_MAX) & _all(ns, 0, INT_MAX)
            & F.forall(t, lambda x: F.coalesce(x["numSamples"], F.lit(0)) <= x["maxSamples"])
            & _all(t.getField("msgThroughputIn"), 0, DMAX)
            & _all(t.getField("msgThroughputOut"), 0, DMAX)
            & _all(t.getField("msgRateIn"), 0, DMAX) & _all(t.getField("msgRateOut"), 0, DMAX))


def _blds_ok(x: Any) -> Any:
    """The extensible ``BrokerLoadData`` of every broker."""
    F = _F()
    ok = _resources_ok(x)
    for k in ("msgThroughputIn", "msgThroughputOut", "msgRateIn", "msgRateOut",
              "msgThroughputEMA", "maxResourceUsage", "weightedMaxEMA"):
        ok = ok & _all(x.getField(k), 0, DMAX)
    ok = ok & _all(x.getField("bundleCount"), 0, INT_MAX) & _all(x.getField("topics"), 0, INT_MAX)
    ok = ok & _all(x.getField("updatedAt"), 0, LONG_MAX)
    ok = ok & _all(x.getField("reportedAt"), 0, LONG_MAX)
    return ok & F.forall(x, lambda v: _strings_ok(v["reconstructed"]))


def _strings_ok(arr: Any) -> Any:
    return arr.isNull() | _F().forall(arr, lambda v: _is_string(v))


def _tops_ok(x: Any) -> Any:
    """The extensible ``TopBundlesLoadData`` of every broker."""
    F = _F()
    empty = F.array().cast(_top_items_type())
    items = F.flatten(F.transform(x, lambda v: F.coalesce(v["topBundlesLoadData"], empty)))
    names = items.getField("bundleName")
    return (_no_nulls(items) & _stats_all_ok(items.getField("stats"), LONG_MAX)
            & F.forall(names, lambda n: _is_string(n) & (F.instr(_vstring(n), "/") > 0))
            & F.forall(x, lambda v: _strings_ok(v["reconstructed"])))


def _top_items_type() -> str:
    schema = element_schema("_")
    top = schema["topBundlesLoadData"].dataType.valueType
    return str(top["topBundlesLoadData"].dataType.simpleString())


def captured_at_ms(v: Any) -> Any:
    """``capturedAt`` as epoch ms (snapshot_schema's ``parse_captured_at``), null if invalid."""
    F = _F()
    t = _schema_of(v)
    as_int = F.call_function("variant_get", v, F.lit("$"), F.lit("bigint"))
    text = _vstring(v)

    def g(i: int) -> Any:
        return F.regexp_extract(text, RFC3339_RE, i)

    y, mo, d = g(1).cast("int"), g(2).cast("int"), g(3).cast("int")
    hh, mi, ss = g(4).cast("long"), g(5).cast("long"), g(6).cast("long")
    frac, sign = g(7), g(8)
    oh, om = g(9), g(10)
    offset_min = F.when(sign == "", F.lit(0)).otherwise(oh.cast("long") * 60 + om.cast("long"))
    signed = F.when(sign == "-", -offset_min).otherwise(offset_min)
    days = F.datediff(F.make_date(y, mo, d), F.lit("1970-01-01").cast("date")).cast("long")
    millis = F.rpad(F.substring(frac, 1, 3), 3, "0").cast("long")
    seconds = days * 86400 + hh * 3600 + mi * 60 + ss - signed * 60
    text_ms = F.when(
        text.rlike(RFC3339_RE) & (y >= 1) & (hh <= 23) & (mi <= 59) & (ss <= 59)
        & (offset_min < 1440) & F.make_date(y, mo, d).isNotNull(),
        seconds * 1000 + millis)
    ms = F.when(t == "BIGINT", as_int).when(t == "STRING", text_ms)
    return F.when((ms >= 0) & (ms <= MAX_EPOCH_MS), ms)


def line_checks(df: Any) -> Any:
    """Add the snapshot's fields and ``ok`` (every rule of the reader that needs no driver-side
    table) to parsed lines."""
    F = _F()
    s = F.col("s")
    lm = s["loadManager"]
    df = df.select(
        "*",
        _vstring(s["cluster"]).alias("cluster"),
        captured_at_ms(s["capturedAt"]).alias("captured_at"),
        F.when(lm.isNull(), F.lit("modular")).otherwise(_vstring(lm)).alias("load_manager"),
        section_json(s["config"]).alias("config_json"),
        section_json(s["namespaces"]).alias("namespaces_json"),
        owned_names(s).alias("owned"),
    )
    brokers = s["brokers"]
    ok = (
        F.col("guard") & s.isNotNull()
        & _is_string(s["format"]) & (_vstring(s["format"]) == FORMAT)
        & _is_string(s["cluster"]) & (F.length("cluster") > 0)
        & F.col("captured_at").isNotNull()
        & (lm.isNull() | (_is_string(lm) & F.col("load_manager").isin("modular", "extensible")))
        & (s["config"].isNull() | _schema_of(s["config"]).startswith("OBJECT"))
        & (s["namespaces"].isNull() | _schema_of(s["namespaces"]).startswith("OBJECT"))
        & brokers.isNotNull() & _distinct_keys(brokers)
        & F.forall(F.map_keys(brokers), lambda k: F.length(k) > 0)
        & _brokers_ok(brokers)
        & _stats_all_ok(all_stats(s))
        & (F.size(F.array_distinct("owned")) == F.size("owned"))
        & F.forall("owned", _name_ok)
    )
    bd = s["bundleData"]
    bdv = F.map_values(bd)
    ok = ok & (bd.isNull() | (
        _distinct_keys(bd) & F.forall(F.map_keys(bd), _name_ok)
        & _no_nulls(bdv) & _count_array(bdv.getField("topics"), LONG_MAX)
        & _tamds_ok(bdv.getField("shortTermData")) & _tamds_ok(bdv.getField("longTermData"))))
    tp = s["topics"]
    tpv = F.map_values(tp)
    ok = ok & (tp.isNull() | (
        _distinct_keys(tp) & F.forall(F.map_keys(tp), lambda k: k.rlike(TOPIC_RE))
        & _no_nulls(tpv)
        & _all(tpv.getField("msgRateIn"), 0, DMAX) & _all(tpv.getField("msgRateOut"), 0, DMAX)
        & _all(tpv.getField("msgThroughputIn"), 0, DMAX)
        & _all(tpv.getField("msgThroughputOut"), 0, DMAX)
        & _count_array(tpv.getField("producerCount"), INT_MAX)
        & _count_array(tpv.getField("consumerCount"), INT_MAX)))
    ru = s["recentlyUnloaded"]
    ok = ok & (ru.isNull() | (_distinct_keys(ru) & F.forall(F.map_keys(ru), _name_ok)
                              & _no_nulls(F.map_values(ru))
                              & _all(F.map_values(ru), 0, MAX_EPOCH_MS)))
    rub = s["recentlyUnloadedBrokers"]
    ok = ok & (rub.isNull() | (_distinct_keys(rub) & _no_nulls(F.map_values(rub))
                               & _all(F.map_values(rub), 0, MAX_EPOCH_MS)))
    bld = s["brokerLoadData"]
    bldv = F.map_values(bld)
    ok = ok & (bld.isNull() | (_distinct_keys(bld) & _no_nulls(bldv) & _blds_ok(bldv)))
    top = s["topBundlesLoadData"]
    topv = F.map_values(top)
    ok = ok & (top.isNull() | (_distinct_keys(top) & _no_nulls(topv) & _tops_ok(topv)))
    return df.withColumn("ok", F.coalesce(ok, F.lit(False))) \
        .withColumn("config_key", F.xxhash64("config_json")) \
        .withColumn("namespaces_key", F.xxhash64("namespaces_json"))


def ns_part(n: Any) -> Any:
    """``namespace_of`` of a valid bundle name: everything before its ``/0x…_0x…`` tail."""
    return n.substr(_F().lit(1), _F().length(n) - _RANGE_TAIL)


def overlap_ok(owned: Any, ns_names: Any, ns_listed: Any) -> Any:
    """Owned bundles of a namespace that ``namespaces`` lists must be one of its ranges
    (snapshot_schema's ``_NameCache._check_overlap``): what is left of the owned names after
    removing the listed ranges' names must belong to unlisted namespaces. Hash-set operations,
    so linear in the snapshot's size."""
    F = _F()
    rest = F.array_except(owned, ns_names)
    return F.size(F.array_intersect(F.transform(rest, ns_part), ns_listed)) == 0


# ------------------------------------------------------------------------------------------
# Pulsar's arithmetic
# ------------------------------------------------------------------------------------------
def percent(r: Any) -> Any:
    """``ResourceUsage.percentUsage()`` of a ``{usage, limit}`` struct, as a double (NaN → null,
    as lbctl's rows store it)."""
    F = _F()
    u = F.coalesce(r["usage"], F.lit(0.0))
    lim = F.coalesce(r["limit"], F.lit(0.0))
    num, den = u.cast("float").cast("double"), lim.cast("float").cast("double")
    inf = F.lit(float("inf"))
    q = (F.when(den == 0, F.when(num == 0, F.lit(float("nan")))
                .when(num > 0, inf).otherwise(-inf))
         .otherwise((num / den).cast("float").cast("double")))
    p = F.when(r.isNull() | (lim <= 0), F.lit(0.0)).otherwise(q)
    out = (p * 100.0).cast("float").cast("double")
    return F.when(~F.isnan(out), out)


def java_max(*values: Any) -> Any:
    """``LocalBrokerData.max``: a value replaces the best only when strictly greater (never NaN);
    null (a NaN percent stored as null) never wins either."""
    F = _F()
    best = F.lit(float("-inf"))
    for v in values:
        best = F.when(v.isNotNull() & ~F.isnan(v) & (v > best), v).otherwise(best)
    return best


def finite_or_null(x: Any) -> Any:
    F = _F()
    return F.when(~F.isnan(x) & (F.abs(x) <= DMAX), x)
