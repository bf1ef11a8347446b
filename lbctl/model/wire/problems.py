"""What a decoded value breaks, in lbctl's words, read off the wire declarations.

``msgspec`` checks a document against its declaration in C and stops at the first value that does
not fit, but its message names the place in its own notation (``$.brokers[...].msgRateIn``: a map
key is not named) and says nothing of what the value was. So when a decode fails, the document —
as plain JSON/YAML values — is walked here against the same declaration (``msgspec.inspect``),
in declaration order, to the first value that does not fit, and that place is reported as lbctl
names it everywhere: ``brokers["b1:8080"].lastStats["t/ns/0x…"].msgRateIn``, with what the
declaration expects and what was found (``expected a number >= 0, got -1.0``).

The words come from the declarations: a field's ``Meta(extra=…)`` may give

* ``expected`` — what the value should be (``"an object: broker id → LocalBrokerData"``);
* ``missing`` — what a required key that is absent should have held (defaults to ``expected``);
* ``key`` — for a map's key type (or a record, for its keys): what a key should be, said without
  the key's value (``"a broker id (host:port) as the key"``);
* ``explain`` — a function of the value giving the whole expectation (for the few that depend on
  the value, like epoch milliseconds);
* ``dotted`` — on a map: its entries are named ``.name`` rather than ``["name"]`` (settings);
* ``whole`` — on an array: a bad element is reported as the array being wrong.

Numbers need no words: a ``double`` rate, a finite ``double`` and a Java ``int``/``long`` count are
told apart by their constraints (:mod:`lbctl.model.wire.java`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from msgspec import inspect as mi

from lbctl.model.wire.declared import info as _info
from lbctl.model.wire.declared import unwrap as _unwrap
from lbctl.model.wire.java import DOUBLE_MAX, INT_MAX, LONG_MAX
from lbctl.model.wire.paths import join, key_path, show

__all__ = ["Problem", "first_problem"]


class Problem(NamedTuple):
    """Where a document breaks its declaration (a JSON path, ``""`` for the whole) and how."""

    path: str
    message: str


def first_problem(value: object, tp: Any, path: str = "") -> Problem | None:
    """The first place where ``value`` (plain JSON/YAML values) does not fit the declared type
    ``tp``, in declaration order; ``None`` when it fits."""
    return _walk(value, _info(tp), path)


# --------------------------------------------------------------------------------------------
# the walk
# --------------------------------------------------------------------------------------------
def _fail(path: str, extra: Mapping[str, Any], default: str, value: object) -> Problem:
    explain: Callable[[object], str] | None = extra.get("explain")
    if explain is not None:
        return Problem(path, f"{explain(value)}, got {show(value)}")
    return Problem(path, f"expected {extra.get('expected', default)}, got {show(value)}")


def _walk(v: object, t: mi.Type, path: str) -> Problem | None:
    t, extra = _unwrap(t)
    if isinstance(t, mi.StructType):
        return _struct(v, t, extra, path)
    if isinstance(t, mi.DictType):
        return _dict(v, t, extra, path)
    if isinstance(t, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        if type(v) is not list:
            return _fail(path, extra, "an array", v)
        for i, item in enumerate(v):
            p = _walk(item, t.item_type, f"{path}[{i}]")
            if p is not None:
                return _fail(path, extra, "an array", v) if extra.get("whole") else p
        return None
    if isinstance(t, mi.UnionType):
        if _fits(v, t):
            return None
        member = _member_for(v, t.types, loose="expected" not in extra and "explain" not in extra)
        if member is not None:
            return _walk(v, member, path)
        return _fail(path, extra, " or ".join(_kind(m) for m in t.types), v)
    if _fits(v, t):
        return None
    return _leaf(v, t, extra, path)


def _struct(v: object, t: mi.StructType, extra: Mapping[str, Any], path: str) -> Problem | None:
    if type(v) is not dict:
        return _fail(path, extra, "an object", v)
    if t.tag_field is not None and v.get(t.tag_field) != t.tag:
        return Problem(join(path, t.tag_field),
                       f"expected {json.dumps(t.tag)}, got {show(v.get(t.tag_field))}")
    for k in v:
        if type(k) is not str:
            return Problem(join(path, key_path(k)),
                           f"expected {extra.get('key', 'a field name as a string key (quote it)')}")
    for f in t.fields:
        name = f.encode_name
        where = join(path, name)
        if name not in v:
            if f.required:
                fw = _unwrap(f.type)[1]
                wanted = fw.get("missing", fw.get("expected"))
                return Problem(where, "required key is missing"
                               + (f" (expected {wanted})" if wanted else ""))
            continue
        p = _walk(v[name], f.type, where)
        if p is not None:
            return p
    return None


def _dict(v: object, t: mi.DictType, extra: Mapping[str, Any], path: str) -> Problem | None:
    if type(v) is not dict:
        return _fail(path, extra, "an object", v)
    key_t, key_extra = _unwrap(t.key_type)
    dotted = bool(extra.get("dotted"))
    for k, item in v.items():
        where = join(path, str(k)) if dotted and type(k) is str else path + key_path(k)
        if not _fits(k, key_t):
            if "key" in key_extra:
                return Problem(where, f"expected {key_extra['key']}")
            return _fail(where, key_extra, _kind(key_t), k)
        p = _walk(item, t.value_type, where)
        if p is not None:
            return p
    return None


def _member_for(v: object, members: tuple[mi.Type, ...], *, loose: bool) -> mi.Type | None:
    """The one member of a union that ``v``'s JSON kind selects, to say what is wrong inside it;
    ``loose``: a number selects the union's one numeric member, integer or not (a union without
    words of its own says what that member expects)."""
    found = [m for m in members if _same_kind(v, _unwrap(m)[0])]
    if type(v) is dict:  # a tagged union: the tag chooses
        tagged = [m for m in found if _tag_of(m, v)]
        found = tagged or found
    if not found and loose and type(v) in (int, float):
        found = [m for m in members if isinstance(_unwrap(m)[0], mi.IntType | mi.FloatType)]
    return found[0] if len(found) == 1 else None


def _tag_of(t: mi.Type, v: dict[Any, Any]) -> bool:
    """Whether ``t`` is a tagged record whose tag ``v`` carries."""
    u = _unwrap(t)[0]
    return (isinstance(u, mi.StructType) and u.tag_field is not None
            and v.get(u.tag_field) == u.tag)


def _same_kind(v: object, t: mi.Type) -> bool:
    if isinstance(t, mi.StructType | mi.DictType):
        return type(v) is dict
    if isinstance(t, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return type(v) is list
    if isinstance(t, mi.IntType):
        return type(v) is int
    if isinstance(t, mi.FloatType):
        return type(v) is float
    if isinstance(t, mi.StrType | mi.LiteralType):
        return type(v) is str
    return False


def _kind(t: mi.Type) -> str:
    t = _unwrap(t)[0]
    if isinstance(t, mi.StrType):
        return "a string"
    if isinstance(t, mi.IntType):
        return "an integer"
    if isinstance(t, mi.FloatType):
        return "a number"
    if isinstance(t, mi.BoolType):
        return "true or false"
    if isinstance(t, mi.NoneType):
        return "null"
    if isinstance(t, mi.StructType | mi.DictType):
        return "an object"
    if isinstance(t, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return "an array"
    if isinstance(t, mi.LiteralType):
        return " or ".join(json.dumps(x) for x in t.values)
    return "a value"


# --------------------------------------------------------------------------------------------
# leaves
# --------------------------------------------------------------------------------------------
def _fits(v: object, t: mi.Type) -> bool:
    """Whether ``v`` converts to ``t`` as ``msgspec.convert`` would (strict: no bool for a
    number, no float for an integer)."""
    t = _unwrap(t)[0]
    if isinstance(t, mi.AnyType):
        return True
    if isinstance(t, mi.FloatType):
        return (type(v) is float or type(v) is int) and _in_range(v, t)
    if isinstance(t, mi.IntType):
        return type(v) is int and _in_range(v, t)
    if isinstance(t, mi.StrType):
        return (type(v) is str and len(v) >= (t.min_length or 0)
                and (t.pattern is None or re.search(t.pattern, v) is not None))
    if isinstance(t, mi.BoolType):
        return type(v) is bool
    if isinstance(t, mi.NoneType):
        return v is None
    if isinstance(t, mi.LiteralType):
        return type(v) in (str, int) and v in t.values
    if isinstance(t, mi.UnionType):
        return any(_fits(v, m) for m in t.types)
    if isinstance(t, mi.ListType | mi.VarTupleType | mi.SetType | mi.FrozenSetType):
        return type(v) is list and all(_fits(x, t.item_type) for x in v)
    if isinstance(t, mi.DictType):
        return type(v) is dict and all(_fits(k, t.key_type) and _fits(x, t.value_type)
                                       for k, x in v.items())
    if isinstance(t, mi.StructType):
        return _walk(v, t, "") is None
    return False


def _in_range(v: Any, t: mi.FloatType | mi.IntType) -> bool:
    return ((t.ge is None or v >= t.ge) and (t.le is None or v <= t.le)
            and (t.gt is None or v > t.gt) and (t.lt is None or v < t.lt))


def _leaf(v: object, t: mi.Type, extra: Mapping[str, Any], path: str) -> Problem:
    if "explain" in extra or "expected" in extra:
        return _fail(path, extra, "", v)
    if isinstance(t, mi.FloatType):
        return Problem(path, f"{_double_problem(v, t)}, got {show(v)}")
    if isinstance(t, mi.IntType):
        return _count_problem(v, t, path)
    return _fail(path, extra, _kind(t), v)


def _double_problem(v: object, t: mi.FloatType) -> str:
    if type(v) not in (int, float):
        return "expected a number"
    x: float = v  # type: ignore[assignment]  # an int or a float, by the test above
    if not math.isfinite(x):
        return "expected a finite number"
    if t.ge is not None and x < t.ge and t.ge > -DOUBLE_MAX:
        return f"expected a number >= {t.ge:g}"
    if t.le is not None and t.le < DOUBLE_MAX and x > t.le:
        return f"expected a number <= {t.le:g}"
    return "expected a number within the range of a double"


def _java(t: mi.IntType) -> str:
    return {INT_MAX: "int", LONG_MAX: "long"}.get(t.le or 0, "")


def _count_problem(v: object, t: mi.IntType, path: str) -> Problem:
    if t.ge is None and t.le is None:
        return Problem(path, f"expected an integer, got {show(v)}")
    low = t.ge if t.ge is not None else -(2**63)
    java = _java(t)
    if type(v) is not int:
        if type(v) is float and v.is_integer() and abs(v) >= 2**53 and java:
            # a JSON integer too large for a 64-bit number (the decoder made it a float)
            return Problem(path, f"expected an integer within the range of a Java {java}, got a "
                                 f"number of {len(str(int(abs(v))))} digits")
        return Problem(path, f"expected an integer >= {low}, got {show(v)}")
    if v < low:
        return Problem(path, f"expected an integer >= {low}, got {show(v)}")
    if java:
        return Problem(path, f"expected an integer within the range of a Java {java}, got {show(v)}")
    return Problem(path, f"expected an integer <= {t.le}, got {show(v)}")
