"""Spark types and SQL checks read off lbctl's wire declarations (:mod:`lbctl.model.wire`).

One function maps a declared record to the Spark type its JSON decodes into
(:func:`spark_type`), another to the SQL predicates that hold exactly when every value fits its
declared type and range (:func:`sql_checks`), so the native ingest restates nothing of the
snapshot format: a field's Java range (``msgspec.Meta(ge=…, le=…)``), whether it is required, a
key's length or pattern, a literal's values all come from the one declaration lbctl's own reader
decodes with. The row records of the tables (:mod:`lbctl.model.wire.fleet`) map to Spark type
names the same way (:func:`type_name`, which needs no Spark).

How a declared type becomes a Spark type:

* a number, a boolean: ``double``, ``long`` (every Java integer), ``boolean``; a record: a
  ``struct`` of its fields (by their JSON names); a map: ``map<string, …>``; an array: ``array``;
* a string is read as ``VARIANT``, so that its JSON type can be checked (Spark's JSON reader
  would turn a number into text silently), except a bundle name (``Meta(extra={"bundle_name":
  True})``), which is read as text and must then match the bundle-name grammar (a number's
  text never does); a literal and a union of several kinds are ``VARIANT`` too;
* ``X | None`` is ``X`` (Spark cannot tell null from absent: the native path leaves lines with a
  ``null`` to lbctl's reader anyway); ``Any`` declared ``read_as`` another type is that type.

The predicates accept null (an absent optional value); a required field adds its own
``IS NOT NULL``. Over values nested in maps and arrays they work on whole arrays of values at once
(``map_values(m).msgRateIn`` is every entry's rate), with Spark's native array functions where
they can.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping
from typing import Any

from msgspec import inspect as mi

from lbctl.fleet import _compat
from lbctl.model.wire.declared import info as _info
from lbctl.model.wire.declared import unwrap

__all__ = ["BUNDLE_RE", "columns", "lit", "name_ok", "spark_type", "sql_checks", "type_name"]

#: ``BundleName.parse``'s grammar, anchored for Java's find()
BUNDLE_RE = r"^[^/]+/[^/]+(?:/[^/]+)?/0x[0-9a-f]{8}_0x[0-9a-f]{8}\z"
_DMAX = 1.7976931348623157e308


def _unwrap(t: mi.Type) -> tuple[mi.Type, dict[str, Any]]:
    """:func:`~lbctl.model.wire.declared.unwrap`, then what Spark reads instead: ``X | None`` as
    ``X`` (null reads as absent), an ``Any`` declared ``read_as`` another type as that type."""
    t, extra = unwrap(t)
    if isinstance(t, mi.UnionType):
        rest = [m for m in t.types if not isinstance(m, mi.NoneType)]
        if len(rest) == 1:  # X | None: null reads as absent
            inner, more = _unwrap(rest[0])
            return inner, {**more, **extra}
    if isinstance(t, mi.AnyType) and "read_as" in extra:
        return _unwrap(_info(extra["read_as"]))
    return t, extra


def _is_variant(t: mi.Type, extra: Mapping[str, Any]) -> bool:
    if isinstance(t, mi.StrType):
        return not extra.get("bundle_name")
    return isinstance(t, mi.LiteralType | mi.UnionType | mi.AnyType)


# --------------------------------------------------------------------------------------------
# types
# --------------------------------------------------------------------------------------------
def type_name(tp: Any) -> str:
    """The Spark SQL name of a scalar column's declared type (``string``, ``long``, ``double``,
    ``boolean``)."""
    t, _ = _unwrap(tp if isinstance(tp, mi.Type) else _info(tp))
    if isinstance(t, mi.StrType):
        return "string"
    if isinstance(t, mi.IntType):
        return "long"
    if isinstance(t, mi.FloatType):
        return "double"
    if isinstance(t, mi.BoolType):
        return "boolean"
    raise TypeError(f"not a scalar column type: {t}")


def columns(record: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """(name, Spark type name, ``Meta`` extra) of each field of a row record, in order."""
    info = _info(record)
    assert isinstance(info, mi.StructType)
    out = []
    for f in info.fields:
        _, extra = _unwrap(f.type)
        out.append((f.encode_name, type_name(f.type), extra))
    return out


def spark_type(tp: Any, *, variant: frozenset[str] = frozenset()) -> Any:
    """The Spark type the JSON of a declared type decodes into (module docstring); the fields of
    a record named in ``variant`` are read as ``VARIANT`` whatever their declared type."""
    return _spark(_info(tp), variant)


def _spark(t0: mi.Type, variant: frozenset[str] = frozenset()) -> Any:
    T = _compat.types()
    t, extra = _unwrap(t0)
    if _is_variant(t, extra):
        return T.VariantType()
    if isinstance(t, mi.StrType):
        return T.StringType()
    if isinstance(t, mi.IntType):
        return T.LongType()
    if isinstance(t, mi.FloatType):
        return T.DoubleType()
    if isinstance(t, mi.BoolType):
        return T.BooleanType()
    if isinstance(t, mi.StructType):
        return T.StructType([
            T.StructField(f.encode_name,
                          T.VariantType() if f.encode_name in variant else _spark(f.type))
            for f in t.fields])
    if isinstance(t, mi.DictType):
        return T.MapType(T.StringType(), _spark(t.value_type))
    if isinstance(t, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return T.ArrayType(_spark(t.item_type))
    raise TypeError(f"no Spark type for {t}")


# --------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------
def lit(text: str) -> str:
    """A Spark SQL string literal (backslashes and quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def name_ok(n: str) -> str:
    """A full bundle name: the grammar, and lower < upper (fixed-width lower-case hex)."""
    return f"({n} RLIKE {lit(BUNDLE_RE)} AND substring({n}, -19, 8) < substring({n}, -8, 8))"


def java_regex(pattern: str) -> str:
    """A Python pattern for ``re.search`` as Java's ``find()`` reads it (``\\Z`` is ``\\z``)."""
    return re.sub(r"(?<!\\)\\Z", r"\\z", pattern)


def _double(x: float) -> str:
    return f"{x!r}D" if abs(x) != _DMAX else ("-" if x < 0 else "") + "1.7976931348623157E308D"


def _bounds(t: mi.IntType | mi.FloatType) -> tuple[str | None, str | None]:
    if isinstance(t, mi.FloatType):
        return (None if t.ge is None else _double(t.ge)), (None if t.le is None else _double(t.le))
    return (None if t.ge is None else f"{t.ge}L"), (None if t.le is None else f"{t.le}L")


def _safe(predicate: str) -> str:
    """A predicate over values that may be absent altogether (``forall`` of a null array is
    null): true then."""
    return f"coalesce({predicate}, true)"


class _Vars:
    """Fresh lambda variable names (nested lambdas must not shadow each other)."""

    def __init__(self) -> None:
        self._n = itertools.count()

    def __call__(self) -> str:
        return f"v{next(self._n)}"


def sql_checks(tp: Any, expr: str, *, skip: frozenset[str] = frozenset()) -> list[str]:
    """SQL predicates that hold when the value of ``expr`` (decoded with :func:`spark_type`)
    fits the declared type ``tp``: required fields present, numbers in their range, strings of
    their kind, length and pattern, map keys distinct and valid. The fields of a record named in
    ``skip`` are left out (the caller checks them its own way)."""
    return list(_checks(_info(tp), expr, False, _Vars(), skip))


def _checks(t0: mi.Type, e: str, many: bool, var: _Vars,
            skip: frozenset[str] = frozenset()) -> Iterator[str]:
    t, extra = _unwrap(t0)
    if _is_variant(t, extra):
        yield from _variant_checks(t, e, many, var)
        return
    if isinstance(t, mi.StrType):  # a bundle name, as text
        yield (_safe(f"forall({e}, {(x := var())} -> {x} IS NULL OR {name_ok(x)})") if many
               else f"({e} IS NULL OR {name_ok(e)})")
        return
    if isinstance(t, mi.IntType | mi.FloatType):
        lo, hi = _bounds(t)
        if lo is None and hi is None:
            return
        if many:
            parts = ([f"array_min({e}) >= {lo}"] if lo else []) + \
                ([f"array_max({e}) <= {hi}"] if hi else [])
        else:
            parts = ([f"{e} >= {lo}"] if lo else []) + ([f"{e} <= {hi}"] if hi else [])
        yield f"coalesce({' AND '.join(parts)}, true)"  # NaN fails: Spark orders it highest
        return
    if isinstance(t, mi.StructType):
        for f in t.fields:
            if f.encode_name in skip:
                continue
            sub = f"{e}.`{f.encode_name}`"
            if f.required:
                yield (f"coalesce(size(array_compact({sub})) = size({sub}), true)" if many
                       else f"{sub} IS NOT NULL")
            yield from _checks(f.type, sub, many, var)
        return
    if isinstance(t, mi.DictType):
        m = var()
        if many:
            yield _safe(f"forall({e}, {m} -> {m} IS NULL OR "
                        f"size(array_distinct(map_keys({m}))) = size({m}))")
            present = f"filter({e}, {m} -> {m} IS NOT NULL)"
            keys = f"flatten(transform({present}, {m} -> map_keys({m})))"
            values = f"flatten(transform({present}, {m} -> map_values({m})))"
        else:
            yield f"({e} IS NULL OR size(array_distinct(map_keys({e}))) = size({e}))"
            keys, values = f"map_keys({e})", f"map_values({e})"
        yield from _key_checks(t.key_type, keys, var)
        yield from _checks(t.value_type, values, True, var)
        return
    if isinstance(t, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        if many:
            x = var()
            e = f"flatten(filter({e}, {x} -> {x} IS NOT NULL))"
        yield from _checks(t.item_type, e, True, var)
        return
    # booleans: a value of another JSON kind nulls the whole record (no partial results)


def _key_checks(t0: mi.Type, keys: str, var: _Vars) -> Iterator[str]:
    t, extra = _unwrap(t0)
    if not isinstance(t, mi.StrType):
        return
    k = var()
    if extra.get("bundle_name"):
        yield _safe(f"forall({keys}, {k} -> {name_ok(k)})")
    if t.min_length:
        yield _safe(f"forall({keys}, {k} -> length({k}) >= {t.min_length})")
    if t.pattern is not None:
        yield _safe(f"forall({keys}, {k} -> {k} RLIKE {lit(java_regex(t.pattern))})")


def _variant_checks(t: mi.Type, e: str, many: bool, var: _Vars) -> Iterator[str]:
    """A ``VARIANT`` value: a string of its length, pattern or literal values."""
    if isinstance(t, mi.UnionType | mi.AnyType):
        return  # several JSON kinds (a time as text or a number): the caller's rule reads it
    conds = ["schema_of_variant({v}) = 'STRING'"]
    text = "variant_get({v}, '$', 'string')"
    if isinstance(t, mi.StrType):
        if t.min_length:
            conds.append(f"length({text}) >= {t.min_length}")
        if t.pattern is not None:
            conds.append(f"{text} RLIKE {lit(java_regex(t.pattern))}")
    elif isinstance(t, mi.LiteralType):
        conds.append(f"{text} IN ({', '.join(lit(str(x)) for x in t.values)})")
    if many:
        v = var()
        yield _safe(f"forall({e}, {v} -> {v} IS NULL OR "
                    f"({' AND '.join(c.format(v=v) for c in conds)}))")
    else:
        yield f"({e} IS NULL OR ({' AND '.join(c.format(v=e) for c in conds)}))"
