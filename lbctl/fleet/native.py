"""Snapshot files parsed and validated by Spark itself: ``spark.read.text`` + ``from_json``.

No Python runs per row here. Each ``.jsonl`` line (or whole ``.json`` file) is decoded by Spark's
JSON reader against the schema of snapshot v1 and checked by SQL predicates, both derived from
the one declaration lbctl's own reader decodes with (:mod:`lbctl.model.wire.snapshot`, mapped by
:mod:`lbctl.fleet.schema`: every type, range, required field and key); only the rules a type
cannot express are written here, each beside the reader's (:mod:`lbctl.sources.snapshot_schema`)
it mirrors. The design rule is
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
* a key twice in any one object: Spark's struct keeps one value, lbctl's reader refuses the
  document (every document, whatever its size, since hostile21), so such a line goes to lbctl
  (``try_parse_json``, which refuses repeated keys: ``check_keys``, now true for every file);
* a broker whose ``bundles`` is not a permutation of its ``lastStats`` keys goes to lbctl;
* so does a snapshot with a section whose rules are not restated here (:data:`READER_SECTIONS`:
  what the leader was observed to do, the placement inputs).

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
from lbctl.fleet.schema import BUNDLE_RE as BUNDLE_RE
from lbctl.fleet.schema import lit as lit
from lbctl.fleet.schema import name_ok as name_ok
from lbctl.fleet.schema import spark_type, sql_checks
from lbctl.model.wire import snapshot as w
from lbctl.model.wire.java import MAX_EPOCH_MS
from lbctl.sources.snapshot import DUPLICATE_CHECK_BYTES as DUPLICATE_CHECK_BYTES

FORMAT = w.FORMAT
DMAX = 1.7976931348623157e308
MIBI = 1024 * 1024

#: sections validated on the driver by lbctl's reader, once per distinct value
#: (:mod:`lbctl.fleet.sections`): read whole as ``VARIANT``
DRIVER_SECTIONS = frozenset({"config", "namespaces"})
#: sections whose rules (bundle names of observed moves, regular expressions, topic lists of a
#: namespace, every broker listed) are not restated here: a snapshot with any goes to lbctl
READER_SECTIONS = frozenset({"observed", "availableBrokers", "policies", "namespaceTopics",
                             "resourceQuotas", "dynamicConfig"})
#: snapshot_schema's ``_RFC3339_RE`` with the parts as groups
RFC3339_RE = (r"^([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})"
              r"(?:\.([0-9]+))?(?:[Zz]|([+-])([0-9]{2}):([0-9]{2}))\z")
#: a value written as JSON ``null`` (after ``[``, ``:`` or ``,``); a match inside a string only
#: sends the line to lbctl's reader, which is always right
NULL_RE = r"[\[:,][ \t\r\n]*null"
SURROGATE_RE = r"\\u[dD][89abcdefABCDEF]"
_RANGE_TAIL = 22  # len("/0xLLLLLLLL_0xUUUUUUUU")
def check_keys(size: int) -> bool:
    """Whether the lines of a file of ``size`` bytes on disk are checked for repeated keys:
    always, as lbctl's reader checks every document (``lbctl.sources.snapshot.
    _check_duplicate_keys``); until hostile21 only files up to :data:`DUPLICATE_CHECK_BYTES`."""
    del size
    return True

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
    """Snapshot v1 as Spark types (:func:`lbctl.fleet.schema.spark_type` of its declaration), plus
    the sentinel field of the wrapper's second element."""
    T = _compat.types()
    snap = spark_type(w.Snapshot, variant=DRIVER_SECTIONS | READER_SECTIONS)
    return T.StructType([*snap.fields, T.StructField(sentinel, T.LongType())])


def stats_type() -> Any:
    """``NamespaceBundleStats`` as a Spark type."""
    return spark_type(w.NamespaceBundleStats)


# ------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------
def read_text(spark: Any, line_paths: list[str], whole_paths: list[str]) -> Any:
    """``(uri, text)``: the non-blank lines of ``.jsonl`` files and the whole of ``.json`` files
    (a leading BOM removed, as lbctl's reader does for a whole file)."""
    F = _compat.functions()
    parts = []
    if line_paths:
        # lines end at \n only, as lbctl's reader splits them (JSON Lines: a \r is whitespace).
        # Hadoop's default reader also ends a line at a lone \r: two records separated by one
        # would each parse here while lbctl's reader refuses the file — two verdicts for one
        # file. With \n as the separator such a line holds two values and goes to lbctl's
        # reader, which refuses it with its message. The read itself is ~15 % slower (200 MB
        # of lines: 1.9 → 2.3 s), a small part of an ingest, whose cost is the JSON decoding.
        lines = spark.read.text(line_paths, lineSep="\n")
        value = F.col("value")
        text = F.when(value.endswith("\r"), F.expr("substr(value, 1, length(value) - 1)")) \
            .otherwise(value)  # a CRLF file's lines read as before (the content hash)
        parts.append(lines.select(F.col("_metadata.file_path").alias("uri"),
                                  text.alias("text")))
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
# API they cost ~10,000 calls into the JVM per run (seconds), as text one parse. The types,
# ranges and keys come from the declaration (:func:`lbctl.fleet.schema.sql_checks`); what
# follows are the rules a type cannot express.
S = "a[0]"  # the snapshot: the first element of the decoded ``[LINE, {sentinel: 1}]``
_EPOCH = f"{MAX_EPOCH_MS}L"


def _and(*parts: str) -> str:
    return "(" + " AND ".join(parts) + ")"


def vstring(v: str) -> str:
    return f"variant_get({v}, '$', 'string')"


def _distinct(arr: str) -> str:
    """A JSON array that is a set (``bundles``, gains, losses: Pulsar's ``Set<String>``)."""
    return f"({arr} IS NULL OR size(array_distinct({arr})) = size({arr}))"


def stats_of(b: str) -> str:
    """``lastStats``, or the ``bundleStats`` older brokers wrote when there is no ``lastStats``."""
    return f"coalesce({b}.lastStats, {b}.bundleStats)"


def _broker_sets_ok(b: str) -> str:
    """What is checked broker by broker: its bundle sets, and sums that fit."""
    st = stats_of(b)
    # the owned set: lbctl's reader allows ``bundles`` to differ from the stats' keys; the
    # native path takes the usual case (the same set, or no stats at all) and leaves the rest
    parts = [f"({b}.bundles IS NULL OR {st} IS NULL "
             f"OR array_sort({b}.bundles) = array_sort(map_keys({st})))",
             _distinct(f"{b}.bundles"), _distinct(f"{b}.lastBundleGains"),
             _distinct(f"{b}.lastBundleLosses")]
    # missing aggregates are sums; a sum past a Java long cannot be stored (lbctl's rows fail)
    for k in ("topics", "consumerCount", "producerCount"):
        top = f"CAST(coalesce(array_max(map_values({st}).{k}), 0) AS DOUBLE)"
        parts.append(f"({st} IS NULL OR {top} * size({st}) < 9.2E18D)")
    return _and(*parts)


def owned_names(s: str = S) -> str:
    """Every bundle a broker owns, brokers in file order (``ClusterState.owners()``'s order)."""
    return (f"flatten(transform(map_values({s}.brokers), "
            f"b -> coalesce(map_keys({stats_of('b')}), b.bundles, CAST(array() AS array<string>))))")


def _samples_ok(t: str) -> str:
    """``numSamples <= maxSamples`` of every ``TimeAverageMessageData`` of an array."""
    return f"forall({t}, x -> coalesce(x.numSamples, 0) <= x.maxSamples)"


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
    owned = owned_names(s)
    bdv = f"map_values({s}.bundleData)"
    rules = [
        guard_sql(sentinel), f"{s} IS NOT NULL",
        *sql_checks(w.Snapshot, s, skip=DRIVER_SECTIONS | READER_SECTIONS),
        *[f"{s}.`{k}` IS NULL" for k in sorted(READER_SECTIONS)],
        f"({s}.config IS NULL OR startswith(schema_of_variant({s}.config), 'OBJECT'))",
        f"({s}.namespaces IS NULL OR startswith(schema_of_variant({s}.namespaces), 'OBJECT'))",
        f"{captured_at_ms(f'{s}.capturedAt')} IS NOT NULL",
        f"forall(map_values({s}.brokers), b -> {_broker_sets_ok('b')})",
        # a LoadReport's nested usage and timestamp are read by lbctl's reader
        f"forall(map_values({s}.brokers), b -> b.systemResourceUsage IS NULL "
        "AND b.`timestamp` IS NULL)",
        f"size(array_distinct({owned})) = size({owned})",  # one owner per bundle
        f"({s}.bundleData IS NULL OR "
        f"({_samples_ok(f'{bdv}.shortTermData')} AND {_samples_ok(f'{bdv}.longTermData')}))",
    ]
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
