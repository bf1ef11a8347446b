"""``java.util.TreeMap.put`` with a comparator, red-black balancing included (``fixAfterInsertion``,
``rotateLeft``/``rotateRight``, JDK 17).

``LoadReport.getSortedBundleStats`` fills a ``TreeMap`` whose ``NamespaceBundleStatsComparator``
answers −1 or 1, never 0, and compares within thresholds: it is no order, so where a key lands —
and which key comes first — depends on the tree's shape at each insertion, which the rotations
change. Reproducing the tree is the only way to know the first key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K")
RED, BLACK = False, True


class _Node(Generic[K]):
    __slots__ = ("key", "left", "right", "parent", "color")

    def __init__(self, key: K, parent: _Node[K] | None) -> None:
        self.key = key
        self.left: _Node[K] | None = None
        self.right: _Node[K] | None = None
        self.parent = parent
        self.color = BLACK


class TreeMap(Generic[K]):
    """The keys of a ``TreeMap`` (values aside), put one at a time."""

    def __init__(self, compare: Callable[[K, K], int]) -> None:
        self.compare = compare
        self.root: _Node[K] | None = None

    def put_all(self, keys: Iterable[K]) -> TreeMap[K]:
        for k in keys:
            self.put(k)
        return self

    def put(self, key: K) -> None:
        t = self.root
        if t is None:
            self.root = _Node(key, None)
            return
        while True:
            parent = t
            cmp = self.compare(key, t.key)
            if cmp < 0:
                nxt = t.left
            elif cmp > 0:
                nxt = t.right
            else:
                return  # an equal key: the value is replaced, the tree unchanged
            if nxt is None:
                break
            t = nxt
        e = _Node(key, parent)
        if cmp < 0:
            parent.left = e
        else:
            parent.right = e
        self._fix_after_insertion(e)

    def keys(self) -> list[K]:
        """In-order (the map's iteration order)."""
        out: list[K] = []
        stack: list[_Node[K]] = []
        n = self.root
        while stack or n is not None:
            while n is not None:
                stack.append(n)
                n = n.left
            n = stack.pop()
            out.append(n.key)
            n = n.right
        return out

    # --- CLR balancing, as TreeMap writes it ----------------------------------------------------
    def _rotate_left(self, p: _Node[K] | None) -> None:
        if p is None:
            return
        r = p.right
        assert r is not None
        p.right = r.left
        if r.left is not None:
            r.left.parent = p
        r.parent = p.parent
        if p.parent is None:
            self.root = r
        elif p.parent.left is p:
            p.parent.left = r
        else:
            p.parent.right = r
        r.left = p
        p.parent = r

    def _rotate_right(self, p: _Node[K] | None) -> None:
        if p is None:
            return
        left = p.left
        assert left is not None
        p.left = left.right
        if left.right is not None:
            left.right.parent = p
        left.parent = p.parent
        if p.parent is None:
            self.root = left
        elif p.parent.right is p:
            p.parent.right = left
        else:
            p.parent.left = left
        left.right = p
        p.parent = left

    def _fix_after_insertion(self, x: _Node[K] | None) -> None:
        assert x is not None
        x.color = RED
        while x is not None and x is not self.root and _color(x.parent) == RED:
            if _parent(x) is _left(_parent(_parent(x))):
                y = _right(_parent(_parent(x)))
                if _color(y) == RED:
                    _set(_parent(x), BLACK)
                    _set(y, BLACK)
                    _set(_parent(_parent(x)), RED)
                    x = _parent(_parent(x))
                else:
                    if x is _right(_parent(x)):
                        x = _parent(x)
                        self._rotate_left(x)
                    _set(_parent(x), BLACK)
                    _set(_parent(_parent(x)), RED)
                    self._rotate_right(_parent(_parent(x)))
            else:
                y = _left(_parent(_parent(x)))
                if _color(y) == RED:
                    _set(_parent(x), BLACK)
                    _set(y, BLACK)
                    _set(_parent(_parent(x)), RED)
                    x = _parent(_parent(x))
                else:
                    if x is _left(_parent(x)):
                        x = _parent(x)
                        self._rotate_right(x)
                    _set(_parent(x), BLACK)
                    _set(_parent(_parent(x)), RED)
                    self._rotate_left(_parent(_parent(x)))
        assert self.root is not None
        self.root.color = BLACK


# TreeMap's null-safe helpers (colorOf, parentOf, setColor, leftOf, rightOf)
def _color(p: _Node[K] | None) -> bool:
    return BLACK if p is None else p.color


def _parent(p: _Node[K] | None) -> _Node[K] | None:
    return None if p is None else p.parent


def _set(p: _Node[K] | None, c: bool) -> None:
    if p is not None:
        p.color = c


def _left(p: _Node[K] | None) -> _Node[K] | None:
    return None if p is None else p.left


def _right(p: _Node[K] | None) -> _Node[K] | None:
    return None if p is None else p.right
