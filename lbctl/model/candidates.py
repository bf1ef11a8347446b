"""A candidate list without a few of its brokers, kept as the list and the few.

``removeMostServicingBrokersForNamespace`` drops a namespace's owners — a handful, or a few
hundred — from the candidate brokers, which on a large cluster are thousands, and a cycle does
that for every namespace it places a bundle of. Copying the candidates each time made a cycle's
cost grow with brokers × namespaces; :class:`Excluding` is the list and the dropped brokers, built
in time proportional to the dropped ones. It is a read-only sequence in the list's order (what a
strategy or an explanation iterates), and strategies that rank one list many times
(``LeastLongTermMessageRate``) rank ``base`` once and skip ``excluded``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from itertools import filterfalse
from typing import Any, overload


class Excluding(Sequence[str]):
    """``base`` without ``excluded`` (a subset of ``base``'s distinct names), in ``base``'s order.
    ``members`` is ``base`` as a set. Equal to any sequence of the same names in the same order."""

    __slots__ = ("_items", "base", "excluded", "members")

    def __init__(self, base: tuple[str, ...], excluded: frozenset[str],
                 members: AbstractSet[str]) -> None:
        self.base = base
        self.excluded = excluded
        self.members = members
        self._items: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.base) - len(self.excluded)

    def __iter__(self) -> Iterator[str]:
        return filterfalse(self.excluded.__contains__, self.base)

    def __contains__(self, name: object) -> bool:
        return name not in self.excluded and name in self.members

    def items(self) -> tuple[str, ...]:
        """The names as a tuple (built once, on first use)."""
        if self._items is None:
            self._items = tuple(self)
        return self._items

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...

    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        return self.items()[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Excluding | tuple | list):
            return self.items() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.items())

    def __repr__(self) -> str:
        return repr(self.items())

    def __reduce__(self) -> tuple[Any, ...]:
        return (tuple, (self.items(),))
