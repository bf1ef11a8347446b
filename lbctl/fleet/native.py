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
* a key twice in any one object of a document small enough for lbctl's reader to check for
  repeated keys (:data:`DUPLICATE_CHECK_BYTES`): Spark's struct keeps one value, the reader may
  refuse the document, so such a line goes to lbctl (``try_parse_json``, which refuses repeated
  keys, is run only on the lines of those files: ``check_keys``);
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
#: lbctl's reader checks JSON documents up to this size (after gunzip) for repeated object keys
#: (``lbctl.sources.snapshot``); a gzip file is never much smaller than its content, so files
#: up to this size plus a margin on disk are the ones whose lines are checked here
DUPLICATE_CHECK_BYTES = 4 << 20
DUPLICATE_CHECK_MARGIN = 64 << 10


def check_keys(size: int) -> bool:
    """Whether the lines of a file of ``size`` bytes on disk are checked for repeated keys."""
    return size <= DUPLICATE_CHECK_BYTES + DUPLICATE_CHECK_MARGIN

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
    """Add ``a``, the line decoded as ``[snapshot, {sentinel: 1}]``, to ``(source, text)`` rows
    (:func:`line_checks` takes it from there)."""
    F = _compat.functions()
    T = _compat.types()
    schema = T.ArrayType(element_schema(sentinel))
    wrapped = F.concat(F.lit("["), F.col("text"), F.lit(f',{{"{sentinel}":1}}]'))
    return lines.select("*", F.from_json(wrapped, schema, JSON_OPTIONS).alias("a"))


# ------------------------------------------------------------------------------------------
# the checks, as SQL text
# ------------------------------------------------------------------------------------------
# The rules are written as Spark SQL text and handed over in one piece: built with the Column
# API they cost ~10,000 calls into the JVM per run (seconds), as text one parse. Checks over many
# values at once use Spark's native array functions on a field pulled out of an array of structs
# (``map_values(m).msgRateIn`` is the array of every entry's rate): higher-order functions
# (forall, transform) run interpreted, element by element, and are kept for the rules that need
# them (names, per-broker sets).
S = "a[0]"  # the snapshot: the first element of the decoded ``[LINE, {sentinel: 1}]``
_DMAX = "1.7976931348623157E308D"
_INT = str(INT_MAX)
_LONG = f"{LONG_MAX}L"
_EPOCH = f"{MAX_EPOCH_MS}L"
RESOURCES = ("cpu", "memory", "directMemory", "bandwidthIn", "bandwidthOut")
BROKER_RATES = ("msgRateIn", "msgRateOut", "msgThroughputIn", "msgThroughputOut")


def lit(text: str) -> str:
    """A Spark SQL string literal (backslashes and quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _and(*parts: str) -> str:
    return "(" + " AND ".join(parts) + ")"


def _all(arr: str, lo: str, hi: str) -> str:
    """Every non-null element of a numeric array within [lo, hi] (NaN fails: Spark orders it
    above everything; an empty or all-null array passes)."""
    return f"coalesce(array_min({arr}) >= {lo} AND array_max({arr}) <= {hi}, true)"


def _rates(arr: str) -> str:
    return _all(arr, "0", _DMAX)


def _no_nulls(arr: str) -> str:
    return f"coalesce(size(array_compact({arr})) = size({arr}), true)"


def _is_string(v: str) -> str:
    return f"(schema_of_variant({v}) = 'STRING')"


def vstring(v: str) -> str:
    return f"variant_get({v}, '$', 'string')"


def _distinct_keys(m: str) -> str:
    return f"({m} IS NULL OR size(array_distinct(map_keys({m}))) = size({m}))"


def name_ok(n: str) -> str:
    """A full bundle name: the grammar, and lower < upper (fixed-width lower-case hex)."""
    return f"({n} RLIKE {lit(BUNDLE_RE)} AND substring({n}, -19, 8) < substring({n}, -8, 8))"


def _names_ok(arr: str, var: str) -> str:
    return (f"({arr} IS NULL OR (forall({arr}, {var} -> {name_ok(var)}) "
            f"AND size(array_distinct({arr})) = size({arr})))")


def stats_of(b: str) -> str:
    """``lastStats``, or the ``bundleStats`` older brokers wrote when there is no ``lastStats``."""
    return f"coalesce({b}.lastStats, {b}.bundleStats)"


def _stats_all_ok(stats: str, counts_top: str = _INT) -> str:
    """Every ``NamespaceBundleStats`` of an array: rates finite >= 0, counts in range."""
    return _and(*[_rates(f"{stats}.{k}") for k in ("msgRateIn", "msgThroughputIn", "msgRateOut",
                                                  "msgThroughputOut")],
                _all(f"{stats}.consumerCount", "0", counts_top),
                _all(f"{stats}.producerCount", "0", counts_top),
                _all(f"{stats}.topics", "0", _LONG), _all(f"{stats}.cacheSize", "0", _LONG))


def _resources_ok(structs: str) -> str:
    """Each of the five ``{usage, limit}`` of an array of structs holding them: finite."""
    return _and(*[_all(f"{structs}.{r}.{k}", f"-{_DMAX}", _DMAX)
                  for r in RESOURCES for k in ("usage", "limit")])


def _brokers_ok(brokers: str) -> str:
    """Every ``LocalBrokerData`` of the snapshot (``brokers`` is the map)."""
    b = f"map_values({brokers})"
    return _and(_resources_ok(b), *[_rates(f"{b}.{k}") for k in BROKER_RATES],
                *[_all(f"{b}.{k}", "0", _INT) for k in ("numTopics", "numBundles",
                                                         "numConsumers", "numProducers")],
                _all(f"{b}.lastUpdate", "0", _EPOCH), f"forall({b}, b -> {_broker_sets_ok('b')})")


def _broker_sets_ok(b: str) -> str:
    """What is checked broker by broker: its bundle sets, version string, sums that fit."""
    st = stats_of(b)
    # the owned set: lbctl's reader allows ``bundles`` to differ from the stats' keys; the
    # native path takes the usual case (the same set, or no stats at all) and leaves the rest
    parts = [f"({b}.bundles IS NULL OR {st} IS NULL "
             f"OR array_sort({b}.bundles) = array_sort(map_keys({st})))",
             _names_ok(f"{b}.lastBundleGains", "g"), _names_ok(f"{b}.lastBundleLosses", "l"),
             f"({b}.brokerVersionString IS NULL OR {_is_string(f'{b}.brokerVersionString')})"]
    # missing aggregates are sums; a sum past a Java long cannot be stored (lbctl's rows fail)
    for k in ("topics", "consumerCount", "producerCount"):
        top = f"CAST(coalesce(array_max(map_values({st}).{k}), 0) AS DOUBLE)"
        parts.append(f"({st} IS NULL OR {top} * size({st}) < 9.2E18D)")
    return _and(*parts)


def all_stats(s: str = S) -> str:
    """Every bundle's ``NamespaceBundleStats`` of the snapshot, brokers in order."""
    empty = f"CAST(array() AS array<{stats_type().simpleString()}>)"
    return (f"flatten(transform(map_values({s}.brokers), "
            f"b -> coalesce(map_values({stats_of('b')}), {empty})))")


def owned_names(s: str = S) -> str:
    """Every bundle a broker owns, brokers in file order (``ClusterState.owners()``'s order)."""
    return (f"flatten(transform(map_values({s}.brokers), "
            f"b -> coalesce(map_keys({stats_of('b')}), b.bundles, CAST(array() AS array<string>))))")


def _tamds_ok(t: str) -> str:
    """``TimeAverageMessageData`` of an array of bundle data: required, maxSamples > 0 and
    required, numSamples <= maxSamples, rates finite >= 0."""
    return _and(_no_nulls(t), _no_nulls(f"{t}.maxSamples"), _all(f"{t}.maxSamples", "1", _INT),
                _all(f"{t}.numSamples", "0", _INT),
                f"forall({t}, x -> coalesce(x.numSamples, 0) <= x.maxSamples)",
                *[_rates(f"{t}.{k}") for k in ("msgThroughputIn", "msgThroughputOut",
                                               "msgRateIn", "msgRateOut")])


def _strings_ok(arr: str, var: str) -> str:
    return f"({arr} IS NULL OR forall({arr}, {var} -> {_is_string(var)}))"


def _blds_ok(x: str) -> str:
    """The extensible ``BrokerLoadData`` of every broker."""
    return _and(_resources_ok(x),
                *[_rates(f"{x}.{k}") for k in ("msgThroughputIn", "msgThroughputOut",
                                               "msgRateIn", "msgRateOut", "msgThroughputEMA",
                                               "maxResourceUsage", "weightedMaxEMA")],
                _all(f"{x}.bundleCount", "0", _INT), _all(f"{x}.topics", "0", _INT),
                _all(f"{x}.updatedAt", "0", _LONG), _all(f"{x}.reportedAt", "0", _LONG),
                f"forall({x}, v -> {_strings_ok('v.reconstructed', 'r')})")


def _tops_ok(x: str) -> str:
    """The extensible ``TopBundlesLoadData`` of every broker."""
    top = element_schema("_")["topBundlesLoadData"].dataType.valueType
    empty = f"CAST(array() AS {top['topBundlesLoadData'].dataType.simpleString()})"
    items = f"flatten(transform({x}, v -> coalesce(v.topBundlesLoadData, {empty})))"
    return _and(_no_nulls(items), _stats_all_ok(f"{items}.stats", _LONG),
                f"forall({items}.bundleName, n -> {_is_string('n')} "
                f"AND instr({vstring('n')}, '/') > 0)",
                f"forall({x}, v -> {_strings_ok('v.reconstructed', 'r')})")


def captured_at_ms(v: str) -> str:
    """``capturedAt`` as epoch ms (snapshot_schema's ``parse_captured_at``), null if invalid."""
    text = vstring(v)

    def g(i: int, kind: str = "") -> str:
        e = f"regexp_extract({text}, {lit(RFC3339_RE)}, {i})"
        return f"CAST({e} AS {kind})" if kind else e

    y, mo, d = g(1, "INT"), g(2, "INT"), g(3, "INT")
    hh, mi, ss = g(4, "BIGINT"), g(5, "BIGINT"), g(6, "BIGINT")
    offset = f"(CASE WHEN {g(8)} = '' THEN 0L ELSE {g(9, 'BIGINT')} * 60 + {g(10, 'BIGINT')} END)"
    signed = f"(CASE WHEN {g(8)} = '-' THEN -{offset} ELSE {offset} END)"
    days = f"CAST(datediff(make_date({y}, {mo}, {d}), DATE'1970-01-01') AS BIGINT)"
    millis = f"CAST(rpad(substring({g(7)}, 1, 3), 3, '0') AS BIGINT)"
    seconds = f"({days} * 86400 + {hh} * 3600 + {mi} * 60 + {ss} - {signed} * 60)"
    valid = _and(f"{text} RLIKE {lit(RFC3339_RE)}", f"{y} >= 1", f"{hh} <= 23", f"{mi} <= 59",
                 f"{ss} <= 59", f"{offset} < 1440", f"make_date({y}, {mo}, {d}) IS NOT NULL")
    ms = (f"(CASE schema_of_variant({v}) WHEN 'BIGINT' THEN variant_get({v}, '$', 'bigint') "
          f"WHEN 'STRING' THEN (CASE WHEN {valid} THEN {seconds} * 1000 + {millis} END) END)")
    return f"(CASE WHEN {ms} BETWEEN 0 AND {_EPOCH} THEN {ms} END)"


def section_json(v: str) -> str:
    """A variant section as JSON text (``{}`` when absent): the key of its driver-side check."""
    return f"(CASE WHEN {v} IS NULL THEN '{{}}' ELSE to_json({v}) END)"


def guard_sql(sentinel: str) -> str:
    """The line is within what the native path decides: one JSON value, valid UTF-8, no
    ``null``, no surrogate escape (``contains`` is a tight byte loop; the regular
    expressions run only on the rare hits) and, where ``check_keys``, no object with a key
    twice."""
    return _and("is_valid_utf8(text)",
                f"NOT (contains(text, 'null') AND text RLIKE {lit(NULL_RE)})",
                f"NOT (contains(text, {lit(chr(92) + 'u')}) AND text RLIKE {lit(SURROGATE_RE)})",
                "coalesce(size(a), -1) = 2", f"a[1].`{sentinel}` = 1",
                f"a[0].`{sentinel}` IS NULL",
                "(NOT check_keys OR try_parse_json(text) IS NOT NULL)")


def ok_sql(sentinel: str) -> str:
    """Every rule of lbctl's reader that needs no driver-side table, as one SQL predicate."""
    s = S
    lm = f"{s}.loadManager"
    owned = owned_names(s)
    rules = [
        guard_sql(sentinel), f"{s} IS NOT NULL",
        _is_string(f"{s}.format"), f"{vstring(f'{s}.format')} = {lit(FORMAT)}",
        _is_string(f"{s}.cluster"), f"length({vstring(f'{s}.cluster')}) > 0",
        f"{captured_at_ms(f'{s}.capturedAt')} IS NOT NULL",
        f"({lm} IS NULL OR ({_is_string(lm)} AND {vstring(lm)} IN ('modular', 'extensible')))",
        f"({s}.config IS NULL OR startswith(schema_of_variant({s}.config), 'OBJECT'))",
        f"({s}.namespaces IS NULL OR startswith(schema_of_variant({s}.namespaces), 'OBJECT'))",
        f"{s}.brokers IS NOT NULL", _distinct_keys(f"{s}.brokers"),
        f"forall(map_keys({s}.brokers), k -> length(k) > 0)",
        _brokers_ok(f"{s}.brokers"), _stats_all_ok(all_stats(s)),
        f"size(array_distinct({owned})) = size({owned})",
        f"forall({owned}, n -> {name_ok('n')})",
    ]
    bd, bdv = f"{s}.bundleData", f"map_values({s}.bundleData)"
    rules.append(f"({bd} IS NULL OR " + _and(
        _distinct_keys(bd), f"forall(map_keys({bd}), n -> {name_ok('n')})", _no_nulls(bdv),
        _all(f"{bdv}.topics", "0", _LONG), _tamds_ok(f"{bdv}.shortTermData"),
        _tamds_ok(f"{bdv}.longTermData")) + ")")
    tp, tpv = f"{s}.topics", f"map_values({s}.topics)"
    rules.append(f"({tp} IS NULL OR " + _and(
        _distinct_keys(tp), f"forall(map_keys({tp}), t -> t RLIKE {lit(TOPIC_RE)})",
        _no_nulls(tpv), *[_rates(f"{tpv}.{k}") for k in ("msgRateIn", "msgRateOut",
                                                          "msgThroughputIn", "msgThroughputOut")],
        _all(f"{tpv}.producerCount", "0", _INT), _all(f"{tpv}.consumerCount", "0", _INT)) + ")")
    ru = f"{s}.recentlyUnloaded"
    rules.append(f"({ru} IS NULL OR " + _and(
        _distinct_keys(ru), f"forall(map_keys({ru}), n -> {name_ok('n')})",
        _no_nulls(f"map_values({ru})"), _all(f"map_values({ru})", "0", _EPOCH)) + ")")
    rub = f"{s}.recentlyUnloadedBrokers"
    rules.append(f"({rub} IS NULL OR " + _and(
        _distinct_keys(rub), _no_nulls(f"map_values({rub})"),
        _all(f"map_values({rub})", "0", _EPOCH)) + ")")
    bld = f"{s}.brokerLoadData"
    rules.append(f"({bld} IS NULL OR " + _and(
        _distinct_keys(bld), _no_nulls(f"map_values({bld})"), _blds_ok(f"map_values({bld})"))
        + ")")
    top = f"{s}.topBundlesLoadData"
    rules.append(f"({top} IS NULL OR " + _and(
        _distinct_keys(top), _no_nulls(f"map_values({top})"), _tops_ok(f"map_values({top})"))
        + ")")
    return f"coalesce({_and(*rules)}, false)"


def line_checks(df: Any, sentinel: str) -> Any:
    """From parsed lines (:func:`parse`): the snapshot ``s``, its fields, ``guard``, ``ok``
    (every rule of the reader that needs no driver-side table), the keys of its ``config`` and
    ``namespaces`` sections, a line id ``uid`` and a content hash ``h`` — in one projection
    (every DataFrame step re-checks the whole plan, and this plan is large)."""
    F = _compat.functions()
    s = S
    cols = {
        "s": s,
        "guard": guard_sql(sentinel),
        "cluster": vstring(f"{s}.cluster"),
        "captured_at": captured_at_ms(f"{s}.capturedAt"),
        "load_manager": (f"(CASE WHEN {s}.loadManager IS NULL THEN 'modular' "
                         f"ELSE {vstring(f'{s}.loadManager')} END)"),
        "config_json": section_json(f"{s}.config"),
        "namespaces_json": section_json(f"{s}.namespaces"),
        "owned": owned_names(s),
        "ok": ok_sql(sentinel),
        "config_key": f"xxhash64({section_json(f'{s}.config')})",
        "namespaces_key": f"xxhash64({section_json(f'{s}.namespaces')})",
        "uid": "monotonically_increasing_id()",
        "h": "xxhash64(text)",
    }
    return df.select("source", "text", *[F.expr(e).alias(n) for n, e in cols.items()])


def ns_part(n: Any) -> Any:
    """``namespace_of`` of a valid bundle name: everything before its ``/0x…_0x…`` tail."""
    F = _compat.functions()
    return n.substr(F.lit(1), F.length(n) - _RANGE_TAIL)


def overlap_ok(owned: Any, ns_names: Any, ns_listed: Any) -> Any:
    """Owned bundles of a namespace that ``namespaces`` lists must be one of its ranges
    (snapshot_schema's ``_NameCache._check_overlap``): what is left of the owned names after
    removing the listed ranges' names must belong to unlisted namespaces. Hash-set operations,
    so linear in the snapshot's size."""
    F = _compat.functions()
    rest = F.array_except(owned, ns_names)
    return F.size(F.array_intersect(F.transform(rest, ns_part), ns_listed)) == 0


def _F() -> Any:
    return _compat.functions()


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
