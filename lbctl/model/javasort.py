"""Java's object sort, step for step, for comparators that are not a consistent order.

Pulsar sorts with ``Collections.sort(list, comparator)`` / ``List.sort`` / ``Stream.sorted``, all of
which end in ``Arrays.sort(Object[], Comparator)``, i.e. ``java.util.TimSort`` (JDK 17). For a
comparator that is a total preorder every stable sort gives the same answer, so Python's ``sorted``
is enough. Some of Pulsar's comparators are not: ``(int) (score1 - score2)`` (AvgShedder before PR
#24954) calls scores less than 1.0 apart equal, and that "equal" is not transitive (1.0 ~ 1.6 ~ 2.2
but 1.0 < 2.2). Then the result depends on exactly which pairs TimSort compares, in which order,
and TimSort may notice the inconsistency and throw ``IllegalArgumentException("Comparison method
violates its general contract!")`` (:class:`ComparisonContractViolation` here). This module
reproduces the JDK 17 algorithm so that lbctl gets the same order, and the same throw:

* fewer than 2 elements: nothing to do;
* fewer than 32 (``MIN_MERGE``): the leading run is measured (a strictly descending one is
  reversed in place), then the rest is put in by binary insertion sort — never throws;
* from 32: a ``minRun`` is computed from the length; runs shorter than it are extended by binary
  insertion sort; each run is pushed on a stack and the stack is merged while its lengths break
  the TimSort invariants (``mergeCollapse``), then merged down to one (``mergeForceCollapse``).
  A merge first gallops to trim the parts already in place, then merges from the shorter side
  (``mergeLo`` / ``mergeHi``), switching between one-at-a-time and galloping with an adaptive
  threshold that starts at 7 (``MIN_GALLOP``) per sort. A merge that runs out of its first
  (``mergeLo``) or second (``mergeHi``) run where a consistent order could not have is the throw.

Written from the algorithm's description (Tim Peters' ``listsort.txt``, the JDK's ``TimSort``
javadoc and its observable behaviour), and checked against the JDK 17 on the machine by
``tests/model/test_javasort_jdk.py`` (random lists, sizes 0–200, many near-ties, with ``(int)
(a - b)`` and with ``Double.compare``: the same order and the same throws). ``Arrays.sort`` takes
no other path for a non-null comparator (the legacy merge sort is behind a system property Pulsar
never sets). ``Collections.sort`` of a ``LinkedList`` sorts a copy and writes it back only when the
sort returns, so a throw leaves the list as it was; :func:`java_sort` returns a new list and
leaves its input alone either way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import TypeVar

from lbctl.model.javaint import d2i

T = TypeVar("T")

MIN_MERGE = 32
MIN_GALLOP = 7
CONTRACT_MESSAGE = "Comparison method violates its general contract!"
#: the exception as Java names it (what ``LoadSheddingTask`` logs)
JAVA_EXCEPTION = f"java.lang.IllegalArgumentException: {CONTRACT_MESSAGE}"


class ComparisonContractViolation(ValueError):
    """Java's ``IllegalArgumentException("Comparison method violates its general contract!")``
    thrown by ``TimSort`` when a merge finds the comparator inconsistent."""

    def __init__(self) -> None:
        super().__init__(CONTRACT_MESSAGE)


def int_cast_compare(a: float, b: float) -> int:
    """``(int) (a - b)``: the comparator Pulsar writes as a lambda over two doubles (truncation
    toward zero, so differences under 1.0 compare equal; NaN → 0; saturating)."""
    return d2i(a - b)


def double_compare_key(x: float) -> tuple[int, float, float]:
    """An ascending sort key that orders like ``Double.compare`` (JDK 17 ``java/lang/Double.java``):
    ``-0.0`` before ``0.0`` (Python's ``<`` calls them equal), every NaN equal to every other and
    after everything, ``+Infinity`` included (Python's ``<`` is false both ways with a NaN, which
    leaves a ``sorted`` by the plain float in no defined order). ``Double.compare`` is a total
    order, so a stable sort by this key gives what ``List.sort(Comparator.comparingDouble(f))``
    gives, equal keys in their list order."""
    if x != x:  # NaN
        return (1, 0.0, 0.0)
    return (0, x, math.copysign(1.0, x))


def java_sort(items: Iterable[T], compare: Callable[[T, T], int]) -> list[T]:
    """``Arrays.sort(a, compare)`` on a copy of ``items``: the JDK 17 order, or
    :class:`ComparisonContractViolation` where the JDK throws. ``compare`` returns a Java ``int``
    (only its sign is read)."""
    a = list(items)
    n = len(a)
    if n < 2:
        return a
    if n < MIN_MERGE:
        run = _count_run_and_make_ascending(a, 0, n, compare)
        _binary_sort(a, 0, n, run, compare)
        return a
    _TimSort(a, compare).sort()
    return a


def min_run_length(n: int) -> int:
    """``minRunLength``: ``n`` halved until below 32, plus 1 if any bit shifted off was set."""
    r = 0
    while n >= MIN_MERGE:
        r |= n & 1
        n >>= 1
    return n + r


def _count_run_and_make_ascending(a: list[T], lo: int, hi: int,
                                  c: Callable[[T, T], int]) -> int:
    """The length of the run starting at ``lo``: non-descending (``c(next, prev) >= 0``), or
    strictly descending (``c(next, prev) < 0``), which is reversed in place."""
    run_hi = lo + 1
    if run_hi == hi:
        return 1
    if c(a[run_hi], a[lo]) < 0:
        run_hi += 1
        while run_hi < hi and c(a[run_hi], a[run_hi - 1]) < 0:
            run_hi += 1
        a[lo:run_hi] = a[lo:run_hi][::-1]
    else:
        run_hi += 1
        while run_hi < hi and c(a[run_hi], a[run_hi - 1]) >= 0:
            run_hi += 1
    return run_hi - lo


def _binary_sort(a: list[T], lo: int, hi: int, start: int, c: Callable[[T, T], int]) -> None:
    """Binary insertion of ``a[start:hi]`` into the sorted ``a[lo:start]``: each pivot goes after
    every element it does not compare below (stable)."""
    if start == lo:
        start += 1
    for i in range(start, hi):
        pivot = a[i]
        left, right = lo, i
        while left < right:
            mid = (left + right) >> 1
            if c(pivot, a[mid]) < 0:
                right = mid
            else:
                left = mid + 1
        if left < i:
            a[left + 1:i + 1] = a[left:i]
            a[left] = pivot


def _gallop_left(key: T, a: list[T], base: int, length: int, hint: int,
                 c: Callable[[T, T], int]) -> int:
    """Where ``key`` goes in the sorted ``a[base:base+length]``, before any equal element: the
    ``k`` with ``a[base+k-1] < key <= a[base+k]``, searched from ``hint`` by doubling steps, then
    by bisection."""
    last, ofs = 0, 1
    if c(key, a[base + hint]) > 0:
        max_ofs = length - hint
        while ofs < max_ofs and c(key, a[base + hint + ofs]) > 0:
            last = ofs
            ofs = (ofs << 1) + 1
        ofs = min(ofs, max_ofs)
        last += hint
        ofs += hint
    else:
        max_ofs = hint + 1
        while ofs < max_ofs and c(key, a[base + hint - ofs]) <= 0:
            last = ofs
            ofs = (ofs << 1) + 1
        ofs = min(ofs, max_ofs)
        last, ofs = hint - ofs, hint - last
    last += 1
    while last < ofs:
        m = last + ((ofs - last) >> 1)
        if c(key, a[base + m]) > 0:
            last = m + 1
        else:
            ofs = m
    return ofs


def _gallop_right(key: T, a: list[T], base: int, length: int, hint: int,
                  c: Callable[[T, T], int]) -> int:
    """As :func:`_gallop_left`, but after every equal element:
    ``a[base+k-1] <= key < a[base+k]``."""
    last, ofs = 0, 1
    if c(key, a[base + hint]) < 0:
        max_ofs = hint + 1
        while ofs < max_ofs and c(key, a[base + hint - ofs]) < 0:
            last = ofs
            ofs = (ofs << 1) + 1
        ofs = min(ofs, max_ofs)
        last, ofs = hint - ofs, hint - last
    else:
        max_ofs = length - hint
        while ofs < max_ofs and c(key, a[base + hint + ofs]) >= 0:
            last = ofs
            ofs = (ofs << 1) + 1
        ofs = min(ofs, max_ofs)
        last += hint
        ofs += hint
    last += 1
    while last < ofs:
        m = last + ((ofs - last) >> 1)
        if c(key, a[base + m]) < 0:
            ofs = m
        else:
            last = m + 1
    return ofs


class _TimSort:
    """The merging half (arrays of 32 elements or more): the run stack and the adaptive gallop
    threshold, which lives as long as one sort."""

    def __init__(self, a: list[T], c: Callable[[T, T], int]) -> None:
        self.a: list[T] = a
        self.c = c
        self.min_gallop = MIN_GALLOP
        self.run_base: list[int] = []
        self.run_len: list[int] = []

    def sort(self) -> None:
        a, c = self.a, self.c
        lo, remaining = 0, len(a)
        min_run = min_run_length(remaining)
        while remaining:
            run = _count_run_and_make_ascending(a, lo, len(a), c)
            if run < min_run:
                force = min(remaining, min_run)
                _binary_sort(a, lo, lo + force, lo + run, c)
                run = force
            self.run_base.append(lo)
            self.run_len.append(run)
            self._merge_collapse()
            lo += run
            remaining -= run
        self._merge_force_collapse()

    def _merge_collapse(self) -> None:
        """Merge until, for the top runs X, Y, Z (Z on top) and W under X,
        ``X > Y + Z``, ``W > X + Y`` and ``Y > Z`` hold (the JDK 8+ check of both depths)."""
        ln = self.run_len
        while len(ln) > 1:
            n = len(ln) - 2
            if (n > 0 and ln[n - 1] <= ln[n] + ln[n + 1]) or (
                    n > 1 and ln[n - 2] <= ln[n] + ln[n - 1]):
                if ln[n - 1] < ln[n + 1]:
                    n -= 1
            elif ln[n] > ln[n + 1]:
                break
            self._merge_at(n)

    def _merge_force_collapse(self) -> None:
        ln = self.run_len
        while len(ln) > 1:
            n = len(ln) - 2
            if n > 0 and ln[n - 1] < ln[n + 1]:
                n -= 1
            self._merge_at(n)

    def _merge_at(self, i: int) -> None:
        """Merge runs ``i`` and ``i + 1``: trim what already sits in place with one gallop from
        each side, then merge from the shorter side."""
        a, c = self.a, self.c
        base1, len1 = self.run_base[i], self.run_len[i]
        base2, len2 = self.run_base[i + 1], self.run_len[i + 1]
        self.run_len[i] = len1 + len2
        del self.run_base[i + 1]
        del self.run_len[i + 1]
        k = _gallop_right(a[base2], a, base1, len1, 0, c)
        base1 += k
        len1 -= k
        if len1 == 0:
            return
        len2 = _gallop_left(a[base1 + len1 - 1], a, base2, len2, len2 - 1, c)
        if len2 == 0:
            return
        if len1 <= len2:
            self._merge_lo(base1, len1, base2, len2)
        else:
            self._merge_hi(base1, len1, base2, len2)

    def _merge_lo(self, base1: int, len1: int, base2: int, len2: int) -> None:
        """Merge left to right with the first run copied out (``len1 <= len2``; the first
        element of run 2 and the last of run 1 are known to move)."""
        a, c = self.a, self.c
        tmp = a[base1:base1 + len1]
        cur1, cur2, dest = 0, base2, base1
        a[dest] = a[cur2]
        dest += 1
        cur2 += 1
        len2 -= 1
        if len2 == 0:
            a[dest:dest + len1] = tmp[cur1:cur1 + len1]
            return
        if len1 == 1:
            a[dest:dest + len2] = a[cur2:cur2 + len2]
            a[dest + len2] = tmp[cur1]
            return
        min_gallop = self.min_gallop
        done = False
        while not done:
            count1 = count2 = 0
            # one at a time, until one run wins min_gallop times in a row
            while True:
                if c(a[cur2], tmp[cur1]) < 0:
                    a[dest] = a[cur2]
                    dest += 1
                    cur2 += 1
                    count2 += 1
                    count1 = 0
                    len2 -= 1
                    if len2 == 0:
                        done = True
                        break
                else:
                    a[dest] = tmp[cur1]
                    dest += 1
                    cur1 += 1
                    count1 += 1
                    count2 = 0
                    len1 -= 1
                    if len1 == 1:
                        done = True
                        break
                if (count1 | count2) >= min_gallop:
                    break
            if done:
                break
            # galloping, while it keeps paying
            while True:
                count1 = _gallop_right(a[cur2], tmp, cur1, len1, 0, c)
                if count1:
                    a[dest:dest + count1] = tmp[cur1:cur1 + count1]
                    dest += count1
                    cur1 += count1
                    len1 -= count1
                    if len1 <= 1:
                        done = True
                        break
                a[dest] = a[cur2]
                dest += 1
                cur2 += 1
                len2 -= 1
                if len2 == 0:
                    done = True
                    break
                count2 = _gallop_left(tmp[cur1], a, cur2, len2, 0, c)
                if count2:
                    a[dest:dest + count2] = a[cur2:cur2 + count2]
                    dest += count2
                    cur2 += count2
                    len2 -= count2
                    if len2 == 0:
                        done = True
                        break
                a[dest] = tmp[cur1]
                dest += 1
                cur1 += 1
                len1 -= 1
                if len1 == 1:
                    done = True
                    break
                min_gallop -= 1
                if not (count1 >= MIN_GALLOP or count2 >= MIN_GALLOP):
                    break
            if done:
                break
            min_gallop = max(min_gallop, 0) + 2
        self.min_gallop = max(min_gallop, 1)
        if len1 == 1:
            a[dest:dest + len2] = a[cur2:cur2 + len2]
            a[dest + len2] = tmp[cur1]
        elif len1 == 0:
            raise ComparisonContractViolation()
        else:
            a[dest:dest + len1] = tmp[cur1:cur1 + len1]

    def _merge_hi(self, base1: int, len1: int, base2: int, len2: int) -> None:
        """Merge right to left with the second run copied out (``len1 > len2``)."""
        a, c = self.a, self.c
        tmp = a[base2:base2 + len2]
        cur1, cur2, dest = base1 + len1 - 1, len2 - 1, base2 + len2 - 1
        a[dest] = a[cur1]
        dest -= 1
        cur1 -= 1
        len1 -= 1
        if len1 == 0:
            a[dest - (len2 - 1):dest + 1] = tmp[0:len2]
            return
        if len2 == 1:
            dest -= len1
            cur1 -= len1
            a[dest + 1:dest + 1 + len1] = a[cur1 + 1:cur1 + 1 + len1]
            a[dest] = tmp[cur2]
            return
        min_gallop = self.min_gallop
        done = False
        while not done:
            count1 = count2 = 0
            while True:
                if c(tmp[cur2], a[cur1]) < 0:
                    a[dest] = a[cur1]
                    dest -= 1
                    cur1 -= 1
                    count1 += 1
                    count2 = 0
                    len1 -= 1
                    if len1 == 0:
                        done = True
                        break
                else:
                    a[dest] = tmp[cur2]
                    dest -= 1
                    cur2 -= 1
                    count2 += 1
                    count1 = 0
                    len2 -= 1
                    if len2 == 1:
                        done = True
                        break
                if (count1 | count2) >= min_gallop:
                    break
            if done:
                break
            while True:
                count1 = len1 - _gallop_right(tmp[cur2], a, base1, len1, len1 - 1, c)
                if count1:
                    dest -= count1
                    cur1 -= count1
                    len1 -= count1
                    a[dest + 1:dest + 1 + count1] = a[cur1 + 1:cur1 + 1 + count1]
                    if len1 == 0:
                        done = True
                        break
                a[dest] = tmp[cur2]
                dest -= 1
                cur2 -= 1
                len2 -= 1
                if len2 == 1:
                    done = True
                    break
                count2 = len2 - _gallop_left(a[cur1], tmp, 0, len2, len2 - 1, c)
                if count2:
                    dest -= count2
                    cur2 -= count2
                    len2 -= count2
                    a[dest + 1:dest + 1 + count2] = tmp[cur2 + 1:cur2 + 1 + count2]
                    if len2 <= 1:
                        done = True
                        break
                a[dest] = a[cur1]
                dest -= 1
                cur1 -= 1
                len1 -= 1
                if len1 == 0:
                    done = True
                    break
                min_gallop -= 1
                if not (count1 >= MIN_GALLOP or count2 >= MIN_GALLOP):
                    break
            if done:
                break
            min_gallop = max(min_gallop, 0) + 2
        self.min_gallop = max(min_gallop, 1)
        if len2 == 1:
            dest -= len1
            cur1 -= len1
            a[dest + 1:dest + 1 + len1] = a[cur1 + 1:cur1 + 1 + len1]
            a[dest] = tmp[cur2]
        elif len2 == 0:
            raise ComparisonContractViolation()
        else:
            a[dest - (len2 - 1):dest + 1] = tmp[0:len2]
