"""Pulsar's JSON scalar types as decoding constraints (``msgspec.Meta``).

Jackson reads a Java ``double`` from any JSON number and refuses ``true``/``false``; an ``int`` or
``long`` from a JSON integer within the type's range. lbctl adds what a rate or a count means: a
rate is finite and ``>= 0`` (NaN and ±Infinity are not JSON numbers, but YAML's ``.nan`` and
Python's ``json`` produce them), a count ``>= 0``; a resource ``usage``/``limit`` may be negative
(``ResourceUsage.reset()`` writes ``-1``) but is finite. An instant is epoch milliseconds between
1970 and 9999-12-31T23:59:59.999Z (the last one ``datetime`` can print).
"""


import sys
from typing import Annotated

from msgspec import Meta

DOUBLE_MAX = sys.float_info.max
INT_MAX = 2**31 - 1  # Java int
LONG_MAX = 2**63 - 1  # Java long
#: 9999-12-31T23:59:59.999Z
MAX_EPOCH_MS = 253402300799999

#: a ``double`` rate or throughput: finite, ``>= 0`` (a JSON integer is read as a double)
JavaRate = Annotated[float, Meta(ge=0.0, le=DOUBLE_MAX)]
#: a ``double`` that may be negative (resource usage and limit): finite
JavaDouble = Annotated[float, Meta(ge=-DOUBLE_MAX, le=DOUBLE_MAX)]
#: an ``int`` count: an integer in ``[0, 2^31 - 1]``
JavaIntCount = Annotated[int, Meta(ge=0, le=INT_MAX)]
#: a ``long`` count: an integer in ``[0, 2^63 - 1]``
JavaLongCount = Annotated[int, Meta(ge=0, le=LONG_MAX)]


def _epoch_problem(value: object) -> str:
    if type(value) is not int:
        return "expected an integer (epoch milliseconds)"
    return f"expected epoch milliseconds between 0 and {MAX_EPOCH_MS}"


#: an instant as epoch milliseconds (a JSON integer)
EpochMillis = Annotated[int, Meta(ge=0, le=MAX_EPOCH_MS, extra={"explain": _epoch_problem})]
