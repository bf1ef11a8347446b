"""Java hash-map iteration order, so that ties break the way Pulsar breaks them.

Pulsar's load manager keeps brokers and bundles in ``ConcurrentHashMap``/``HashMap``/``HashSet``
and resolves many ties by "first encountered" (UniformLoadShedder's max broker, the placement
strategies' best list) or by stable sorts over such maps (the greedy bundle selectors), and it
issues unloads in the order of a Guava ``ArrayListMultimap``. To give the same answer, lbctl
iterates keys in the order JDK 17 would. The rules (JDK 17 ``HashMap``, ``HashSet``,
``Collectors.toMap`` and ``ConcurrentHashMap``, checked against the JDK by
``tests/model/test_javaorder_jdk.py``):

* ``h = String.hashCode()`` (``h = 31*h + c`` over UTF-16 code units, 32 bits); the bucket is
  ``(h ^ (h >>> 16)) & (length - 1)``; iteration walks buckets upwards, each bucket's chain in
  order.
* ``HashMap`` (and ``HashSet``): 16 buckets on the first put (or ``tableSizeFor(n)`` for
  ``new HashMap<>(n)``), doubling when the size *exceeds* 3/4 of the length. A resize splits each
  chain into a low and a high half keeping the order, so without tree bins a bucket holds its keys
  in insertion order. ``clear()`` keeps the table.
* ``ConcurrentHashMap``: 16 buckets on the first put, doubling when the size *reaches* 3/4 of the
  length (one key earlier than ``HashMap``). Its ``transfer`` does **not** keep the order: the
  longest tail of a chain whose keys all go to the same half (``lastRun``) is moved as is, and every
  key before it is *prepended* to its half, so those come out reversed. From 12 keys on (the first
  resize) a map's order depends on its insertion history, not only on its keys.
* A chain reaching 9 keys becomes a red-black tree bin (or, below 64 buckets, the table grows
  instead: 8-fold for ``ConcurrentHashMap``); tree bins keep their own chain order (a
  ``HashMap`` tree bin: its root first, each later key right after its tree parent). Both maps
  model that too (:class:`JavaHashMap`, :class:`JavaConcurrentHashMap`), and
  :func:`java_hash_order` turns to :class:`JavaHashMap` when a fill makes a chain that long.
* Guava's ``ArrayListMultimap.create()`` is a ``HashMap`` created with ``Maps.capacity(12)``:
  17 → 32 buckets up to Guava 31.1, 16 buckets from Guava 32.0 on (:func:`multimap_key_order`).

Where each structure comes from (read in OpenJDK 17's sources, ``jdk17u`` as Debian ships it in
``openjdk-17-source``, 17.0.15 and 17.0.21 alike; the tests compile a few lines against the JDK
on the machine, never Pulsar):

* ``String.hashCode`` — ``java/lang/String.java`` ``hashCode()``, which calls
  ``StringLatin1.hashCode`` / ``StringUTF16.hashCode`` (:func:`java_string_hash`).
* ``HashMap`` — ``java/util/HashMap.java``: ``hash`` (:func:`spread`), ``tableSizeFor``
  (:func:`table_size_for`), ``putVal``, ``resize`` (the low/high split), ``removeNode``,
  ``treeifyBin`` and ``TreeNode.treeify`` / ``split`` / ``putTreeVal`` / ``removeTreeNode`` /
  ``balanceInsertion`` / ``balanceDeletion`` / ``rotateLeft`` / ``rotateRight``
  (:class:`JavaHashMap` and the red-black helpers); constants ``TREEIFY_THRESHOLD``,
  ``UNTREEIFY_THRESHOLD``, ``MIN_TREEIFY_CAPACITY``, ``MAXIMUM_CAPACITY``. ``HashSet`` is a
  ``HashMap`` of its elements (``java/util/HashSet.java``), and ``Collectors.toMap`` (two
  arguments) collects into ``HashMap::new`` (``java/util/stream/Collectors.java``).
* ``ConcurrentHashMap`` — ``java/util/concurrent/ConcurrentHashMap.java``: ``spread``
  (:func:`_chm_spread`), ``tableSizeFor``, ``initTable``, ``putVal``, ``replaceNode``,
  ``addCount`` (the resize check, and ``CounterCell`` s under contention), ``tryPresize``,
  ``transfer`` (the ``lastRun`` move, :func:`split_chain`), ``treeifyBin`` and ``TreeBin``
  (``putTreeVal``, ``removeTreeNode``) (:class:`JavaConcurrentHashMap`, :class:`ConcurrentOrder`).
* Guava — ``com/google/common/collect/ArrayListMultimap.java`` ``create()`` (a ``HashMap`` made
  by ``Platform.newHashMapWithExpectedSize(12)``) and ``com/google/common/collect/Maps.java``
  ``capacity``, whose formula changed in Guava 32.0 (:func:`guava_expected_size_capacity`).
  Which Guava a Pulsar release bundles is part of its version profile (:mod:`lbctl.versions`).

What lbctl assumes of the history (what a snapshot cannot tell): the leader's maps were filled in
the snapshot's order, one ``put`` per key, without removals, and never saw concurrent writes
(a ``ConcurrentHashMap`` that did keeps ``CounterCells`` and resizes later; the model supports it
with ``counter_cells=True`` but nothing sets it).
"""

from __future__ import annotations

import math
import struct
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from operator import mul

from lbctl.model.javaint import d2i

MAXIMUM_CAPACITY = 1 << 30
TREEIFY_THRESHOLD = 8
UNTREEIFY_THRESHOLD = 6
MIN_TREEIFY_CAPACITY = 64
_INT_MAX = 0x7FFFFFFF

_POWERS: list[int] = [1]  # 31**k mod 2**32


def _powers(n: int) -> list[int]:
    while len(_POWERS) < n:
        _POWERS.append((_POWERS[-1] * 31) & 0xFFFFFFFF)
    return _POWERS


@lru_cache(maxsize=1 << 16)
def java_string_hash(s: str) -> int:
    """``String.hashCode()`` as an unsigned 32-bit value.

    ``h = s[0]*31^(n-1) + … + s[n-1]`` (mod 2^32) over UTF-16 code units, summed in C with
    ``map`` rather than one Python step per character.
    """
    if s.isascii():
        units: bytes | list[int] = s.encode("ascii")
    else:
        data = s.encode("utf-16-be", "surrogatepass")
        units = [(data[i] << 8) | data[i + 1] for i in range(0, len(data), 2)]
    n = len(units)
    powers = _powers(n)
    total: int = sum(map(mul, units, reversed(powers[:n])))
    return total & 0xFFFFFFFF


def spread(h: int) -> int:
    """``HashMap.hash``: the high half folded into the low half (unsigned here)."""
    return h ^ (h >> 16)


@lru_cache(maxsize=1 << 16)
def _spread_hash(s: str) -> int:
    """``HashMap.hash`` of a string key, memoised by name: a cycle of 10,000 brokers puts the
    same names into a dozen sets (the policy fills' three sets, each cycle's copies), and a
    lookup in C costs less than the two Python calls it saves."""
    return spread(java_string_hash(s))


def _f32(x: float) -> float:
    """Java ``float`` rounding."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


_f2i = d2i  # Java's (int) narrowing of a float or double


def table_size_for(c: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two ≥ ``c`` (1 for ``c`` ≤ 1)."""
    if c <= 1:
        return 1
    n = 1 << (c - 1).bit_length()
    return MAXIMUM_CAPACITY if n >= MAXIMUM_CAPACITY else n


def _signed(h: int) -> int:
    return h - (1 << 32) if h & 0x80000000 else h


def _hm_hash(key: str) -> int:
    """``HashMap.hash(key)``: ``h ^ (h >>> 16)`` as a signed int (the sign orders tree bins)."""
    return _signed(spread(java_string_hash(key)))


def _chm_spread(key: str) -> int:
    """``ConcurrentHashMap.spread(h)``: ``(h ^ (h >>> 16)) & 0x7fffffff``."""
    return spread(java_string_hash(key)) & _INT_MAX


def _utf16(key: str) -> bytes:
    """A sort key that orders like ``String.compareTo`` (UTF-16 code units, then length)."""
    return key.encode("utf-16-be", "surrogatepass")


# --- red-black trees (HashMap.TreeNode and ConcurrentHashMap.TreeBin share the algorithm) --------
class _Node:
    __slots__ = ("hash", "key", "kc", "left", "parent", "red", "right")

    def __init__(self, key: str, h: int) -> None:
        self.key = key
        self.hash = h  # as the map stores it (HashMap: signed; ConcurrentHashMap: non-negative)
        self.kc = _utf16(key)
        self.parent: _Node | None = None
        self.left: _Node | None = None
        self.right: _Node | None = None
        self.red = False


def _goes_left(x: _Node, p: _Node) -> bool:
    """Insertion direction under ``p``: by hash, then ``String.compareTo`` (distinct strings never
    compare equal, so the identity tie-break is never reached)."""
    if p.hash != x.hash:
        return p.hash > x.hash
    return x.kc < p.kc


def _rotate_left(root: _Node | None, p: _Node | None) -> _Node | None:
    if p is not None and (r := p.right) is not None:
        rl = p.right = r.left
        if rl is not None:
            rl.parent = p
        pp = r.parent = p.parent
        if pp is None:
            root = r
            r.red = False
        elif pp.left is p:
            pp.left = r
        else:
            pp.right = r
        r.left = p
        p.parent = r
    return root


def _rotate_right(root: _Node | None, p: _Node | None) -> _Node | None:
    if p is not None and (lf := p.left) is not None:
        lr = p.left = lf.right
        if lr is not None:
            lr.parent = p
        pp = lf.parent = p.parent
        if pp is None:
            root = lf
            lf.red = False
        elif pp.right is p:
            pp.right = lf
        else:
            pp.left = lf
        lf.right = p
        p.parent = lf
    return root


def _balance_insertion(root: _Node | None, x: _Node) -> _Node | None:
    x.red = True
    while True:
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        xpp = xp.parent
        if not xp.red or xpp is None:
            return root
        xppl = xpp.left
        if xp is xppl:
            xppr = xpp.right
            if xppr is not None and xppr.red:
                xppr.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.right:
                    x = xp
                    root = _rotate_left(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_right(root, xpp)
        else:
            if xppl is not None and xppl.red:
                xppl.red = False
                xp.red = False
                xpp.red = True
                x = xpp
            else:
                if x is xp.left:
                    x = xp
                    root = _rotate_right(root, x)
                    xp = x.parent
                    xpp = None if xp is None else xp.parent
                if xp is not None:
                    xp.red = False
                    if xpp is not None:
                        xpp.red = True
                        root = _rotate_left(root, xpp)


def _balance_deletion(root: _Node | None, x: _Node | None) -> _Node | None:
    while True:
        if x is None or x is root:
            return root
        xp = x.parent
        if xp is None:
            x.red = False
            return x
        if x.red:
            x.red = False
            return root
        xpl = xp.left
        if xpl is x:
            xpr = xp.right
            if xpr is not None and xpr.red:
                xpr.red = False
                xp.red = True
                root = _rotate_left(root, xp)
                xp = x.parent
                xpr = None if xp is None else xp.right
            if xpr is None:
                x = xp
            else:
                sl, sr = xpr.left, xpr.right
                if (sr is None or not sr.red) and (sl is None or not sl.red):
                    xpr.red = True
                    x = xp
                else:
                    if sr is None or not sr.red:
                        if sl is not None:
                            sl.red = False
                        xpr.red = True
                        root = _rotate_right(root, xpr)
                        xp = x.parent
                        xpr = None if xp is None else xp.right
                    if xpr is not None:
                        xpr.red = False if xp is None else xp.red
                        sr = xpr.right
                        if sr is not None:
                            sr.red = False
                    if xp is not None:
                        xp.red = False
                        root = _rotate_left(root, xp)
                    x = root
        else:
            if xpl is not None and xpl.red:
                xpl.red = False
                xp.red = True
                root = _rotate_right(root, xp)
                xp = x.parent
                xpl = None if xp is None else xp.left
            if xpl is None:
                x = xp
            else:
                sl, sr = xpl.left, xpl.right
                if (sl is None or not sl.red) and (sr is None or not sr.red):
                    xpl.red = True
                    x = xp
                else:
                    if sl is None or not sl.red:
                        if sr is not None:
                            sr.red = False
                        xpl.red = True
                        root = _rotate_left(root, xpl)
                        xp = x.parent
                        xpl = None if xp is None else xp.left
                    if xpl is not None:
                        xpl.red = False if xp is None else xp.red
                        sl = xpl.left
                        if sl is not None:
                            sl.red = False
                    if xp is not None:
                        xp.red = False
                        root = _rotate_right(root, xp)
                    x = root


def _tree_insert(root: _Node | None, x: _Node) -> tuple[_Node, _Node | None]:
    """Binary descent and ``balanceInsertion``: ``(new root, parent of x)``."""
    x.left = x.right = None
    if root is None:
        x.parent = None
        x.red = False
        return x, None
    p = root
    while True:
        left = _goes_left(x, p)
        xp = p
        nxt = p.left if left else p.right
        if nxt is None:
            x.parent = xp
            if left:
                xp.left = x
            else:
                xp.right = x
            new_root = _balance_insertion(root, x)
            assert new_root is not None
            return new_root, xp
        p = nxt


def _build_tree(nodes: Sequence[_Node]) -> _Node | None:
    """``TreeNode.treeify`` / ``new TreeBin(first)``: insert in chain order; returns the root."""
    root: _Node | None = None
    for x in nodes:
        root, _ = _tree_insert(root, x)
    return root


def _too_small(root: _Node | None) -> bool:
    """``removeTreeNode``'s untreeify test, made before the node leaves the tree."""
    return root is None or root.right is None or root.left is None or root.left.left is None


def _tree_delete(root: _Node | None, p: _Node, hashmap: bool) -> _Node | None:
    """The tree half of ``removeTreeNode`` (deletion by link swapping); the new root.

    ``hashmap``: HashMap blackens a replacement that becomes the root; TreeBin does not.
    """
    pl, pr = p.left, p.right
    if pl is not None and pr is not None:
        s = pr
        while s.left is not None:
            s = s.left
        s.red, p.red = p.red, s.red
        sr = s.right
        pp = p.parent
        if s is pr:
            p.parent = s
            s.right = p
        else:
            sp = s.parent
            p.parent = sp
            if sp is not None:
                if s is sp.left:
                    sp.left = p
                else:
                    sp.right = p
            s.right = pr
            pr.parent = s
        p.left = None
        p.right = sr
        if sr is not None:
            sr.parent = p
        s.left = pl
        pl.parent = s
        s.parent = pp
        if pp is None:
            root = s
        elif p is pp.left:
            pp.left = s
        else:
            pp.right = s
        replacement = sr if sr is not None else p
    elif pl is not None:
        replacement = pl
    elif pr is not None:
        replacement = pr
    else:
        replacement = p
    if replacement is not p:
        pp = replacement.parent = p.parent
        if pp is None:
            root = replacement
            if hashmap:
                replacement.red = False
        elif p is pp.left:
            pp.left = replacement
        else:
            pp.right = replacement
        p.left = p.right = p.parent = None
    r = root if p.red else _balance_deletion(root, replacement)
    if replacement is p:
        pp = p.parent
        if pp is not None:
            if p is pp.left:
                pp.left = None
            elif p is pp.right:
                pp.right = None
            p.parent = None
    return r


class _Tree:
    """A tree bin: ``order`` is the chain iteration follows, ``root`` the red-black root."""

    __slots__ = ("nodes", "order", "root")

    def __init__(self, order: list[_Node], root: _Node | None) -> None:
        self.order = order
        self.root = root
        self.nodes = {n.key: n for n in order}


_Bin = list[str] | _Tree


def _bin_keys(b: _Bin) -> list[str]:
    return b if isinstance(b, list) else [n.key for n in b.order]


# --- java.util.HashMap ----------------------------------------------------------------------------
class JavaHashMap:
    """A JDK 17 ``HashMap<String, ?>`` (also ``HashSet``), keys only, single-threaded."""

    def __init__(self, initial_capacity: int | None = None, load_factor: float = 0.75) -> None:
        self.load_factor = _f32(load_factor)
        self.table: list[_Bin | None] | None = None
        self.size = 0
        self._hash: dict[str, int] = {}
        if initial_capacity is None:
            self.threshold = 0  # HashMap(): 16 buckets, threshold 12, decided in resize()
        else:
            if initial_capacity < 0:
                raise ValueError(f"illegal initial capacity {initial_capacity}")
            self.threshold = table_size_for(min(initial_capacity, MAXIMUM_CAPACITY))

    @classmethod
    def copy_of(cls, source_order: Iterable[str]) -> JavaHashMap:
        """``new HashMap<>(map)`` of a map iterating ``source_order``."""
        m = cls()
        m.put_all(source_order)
        return m

    @property
    def capacity(self) -> int:
        return 0 if self.table is None else len(self.table)

    def __len__(self) -> int:
        return self.size

    def __contains__(self, key: object) -> bool:
        return key in self._hash

    def keys(self) -> list[str]:
        out: list[str] = []
        for b in self.table or ():
            if b is not None:
                out.extend(_bin_keys(b))
        return out

    def clear(self) -> None:
        """``clear()``: every bin emptied, the table (and threshold) kept."""
        if self.table is not None and self.size > 0:
            self.table = [None] * len(self.table)
        self.size = 0
        self._hash.clear()

    def put_all(self, source_order: Iterable[str]) -> None:
        """``putAll`` (``putMapEntries``, JDK 17): presize, then one ``put`` per key."""
        src = list(dict.fromkeys(source_order))
        s = len(src)
        if s == 0:
            return
        if self.table is None:
            ft = _f32(_f32(_f32(float(s)) / self.load_factor) + _f32(1.0))
            t = _f2i(ft) if ft < float(MAXIMUM_CAPACITY) else MAXIMUM_CAPACITY
            if t > self.threshold:
                self.threshold = table_size_for(t)
        else:
            while s > self.threshold and len(self.table) < MAXIMUM_CAPACITY:
                self._resize()
        for k in src:
            self.put(k)

    def put(self, key: str) -> bool:
        """``put``/``putIfAbsent``/``add``; True when the key was new."""
        if key in self._hash:
            return False  # replacing a value changes nothing
        h = _hm_hash(key)
        if self.table is None:
            self._resize()
        tab = self.table
        assert tab is not None
        i = (len(tab) - 1) & h
        b = tab[i]
        self._hash[key] = h
        if b is None:
            tab[i] = [key]
        elif isinstance(b, list):
            before = len(b)
            b.append(key)
            if before >= TREEIFY_THRESHOLD:
                self._treeify_bin(h)
        else:
            self._put_tree(b, key, h)
        self.size += 1
        if self.size > self.threshold:
            self._resize()
        return True

    def remove(self, key: str) -> bool:
        h = self._hash.pop(key, None)
        if h is None or self.table is None:
            return False
        tab = self.table
        i = (len(tab) - 1) & h
        b = tab[i]
        if isinstance(b, list):
            b.remove(key)
            if not b:
                tab[i] = None
        elif b is not None:
            self._remove_tree(i, b, key)
        self.size -= 1
        return True

    def _resize(self) -> None:
        old = self.table
        old_cap = 0 if old is None else len(old)
        old_thr = self.threshold
        new_thr = 0
        if old_cap > 0:
            if old_cap >= MAXIMUM_CAPACITY:
                self.threshold = _INT_MAX
                return
            new_cap = old_cap << 1
            if new_cap < MAXIMUM_CAPACITY and old_cap >= 16:
                new_thr = old_thr << 1
        elif old_thr > 0:
            new_cap = old_thr
        else:
            new_cap, new_thr = 16, 12
        if new_thr == 0:
            ft = _f32(float(new_cap) * self.load_factor)
            new_thr = (_f2i(ft) if new_cap < MAXIMUM_CAPACITY and ft < float(MAXIMUM_CAPACITY)
                       else _INT_MAX)
        self.threshold = new_thr
        new: list[_Bin | None] = [None] * new_cap
        self.table = new
        if old is None:
            return
        hashes = self._hash
        for j, b in enumerate(old):
            if b is None:
                continue
            if isinstance(b, list):
                if len(b) == 1:
                    new[hashes[b[0]] & (new_cap - 1)] = b
                    continue
                lo = [k for k in b if not hashes[k] & old_cap]  # order kept
                hi = [k for k in b if hashes[k] & old_cap]
                if lo:
                    new[j] = lo
                if hi:
                    new[j + old_cap] = hi
            else:
                self._split_tree(b, new, j, old_cap)

    def _split_tree(self, t: _Tree, new: list[_Bin | None], index: int, bit: int) -> None:
        lo = [n for n in t.order if not n.hash & bit]
        hi = [n for n in t.order if n.hash & bit]
        for side, at, other in ((lo, index, hi), (hi, index + bit, lo)):
            if not side:
                continue
            if len(side) <= UNTREEIFY_THRESHOLD:
                new[at] = [n.key for n in side]
            elif other:
                new[at] = self._treeify(side)
            else:
                new[at] = t  # the whole tree moves unchanged

    def _treeify(self, nodes: list[_Node]) -> _Tree:
        """``TreeNode.treeify``: built in chain order, then ``moveRootToFront``."""
        root = _build_tree(nodes)
        order = list(nodes)
        if root is not None and order[0] is not root:
            order.remove(root)
            order.insert(0, root)
        return _Tree(order, root)

    def _treeify_bin(self, h: int) -> None:
        tab = self.table
        assert tab is not None
        if len(tab) < MIN_TREEIFY_CAPACITY:
            self._resize()
            return
        i = (len(tab) - 1) & h
        b = tab[i]
        if isinstance(b, list):
            tab[i] = self._treeify([_Node(k, self._hash[k]) for k in b])

    def _put_tree(self, t: _Tree, key: str, h: int) -> None:
        x = _Node(key, h)
        root, xp = _tree_insert(t.root, x)
        # the new node is linked right after its tree parent in the chain
        t.order.insert(t.order.index(xp) + 1 if xp is not None else 0, x)
        t.nodes[key] = x
        t.root = root
        if t.order[0] is not root:  # moveRootToFront
            t.order.remove(root)
            t.order.insert(0, root)

    def _remove_tree(self, i: int, t: _Tree, key: str) -> None:
        assert self.table is not None
        p = t.nodes.pop(key)
        t.order.remove(p)
        if not t.order:
            self.table[i] = None
            return
        if _too_small(t.root):
            self.table[i] = [n.key for n in t.order]  # untreeify, chain order kept
            return
        t.root = _tree_delete(t.root, p, hashmap=True)
        if t.root is not None and t.order[0] is not t.root:  # moveRootToFront
            t.order.remove(t.root)
            t.order.insert(0, t.root)


# --- java.util.concurrent.ConcurrentHashMap ------------------------------------------------------
class JavaConcurrentHashMap:
    """A JDK 17 ``ConcurrentHashMap<String, ?>``, keys only, single-threaded history.

    ``initial_capacity=None`` is ``new ConcurrentHashMap<>()``; otherwise the constructor
    ``(initialCapacity, loadFactor, concurrencyLevel)`` (which ``(n)`` calls with ``0.75f, 1``).
    ``counter_cells=True``: the map once saw contention on its size counter and counts in
    ``CounterCells`` for life; then only a put into a chain of 2 or more (or a tree bin) checks
    for a resize.
    """

    def __init__(self, initial_capacity: int | None = None, load_factor: float = 0.75,
                 concurrency_level: int = 1, counter_cells: bool = False) -> None:
        self.counter_cells = counter_cells
        self.table: list[_Bin | None] | None = None
        self.size = 0
        self._hash: dict[str, int] = {}
        if initial_capacity is None:
            self.size_ctl = 0
        else:
            lf = _f32(load_factor)
            if not lf > 0.0 or initial_capacity < 0 or concurrency_level <= 0:
                raise ValueError("illegal ConcurrentHashMap arguments")
            initial_capacity = max(initial_capacity, concurrency_level)
            # (long)(1.0 + (long)initialCapacity / loadFactor), the division in float
            size = int(1.0 + _f32(_f32(float(initial_capacity)) / lf))
            self.size_ctl = MAXIMUM_CAPACITY if size >= MAXIMUM_CAPACITY else table_size_for(size)

    @classmethod
    def copy_of(cls, source_order: Iterable[str]) -> JavaConcurrentHashMap:
        """``new ConcurrentHashMap<>(map)``: ``sizeCtl = 16``, then ``putAll``."""
        m = cls()
        m.size_ctl = 16
        m.put_all(source_order)
        return m

    @property
    def capacity(self) -> int:
        return 0 if self.table is None else len(self.table)

    def __len__(self) -> int:
        return self.size

    def __contains__(self, key: object) -> bool:
        return key in self._hash

    def keys(self) -> list[str]:
        out: list[str] = []
        for b in self.table or ():
            if b is not None:
                out.extend(_bin_keys(b))
        return out

    def bin(self, index: int) -> list[str]:
        """The keys of one bucket, in iteration order."""
        b = None if self.table is None else self.table[index]
        return [] if b is None else _bin_keys(b)

    def clear(self) -> None:
        """``clear()``: every bin emptied, the table kept; never resizes."""
        if self.table is not None:
            self.table = [None] * len(self.table)
        self.size = 0
        self._hash.clear()

    def put_all(self, source_order: Iterable[str]) -> None:
        src = list(dict.fromkeys(source_order))
        self._try_presize(len(src))
        for k in src:
            self.put(k)

    def put(self, key: str) -> bool:
        """``put``/``putIfAbsent``; True when the key was new."""
        h = self._hash.get(key)
        new = h is None
        if h is None:
            h = _chm_spread(key)
            self._hash[key] = h
        if self.table is None:
            self._init_table()
        tab = self.table
        assert tab is not None
        i = (len(tab) - 1) & h
        b = tab[i]
        if b is None:
            tab[i] = [key]
            bin_count = 0
        elif isinstance(b, list):
            if new:
                bin_count = len(b)  # nodes walked before appending
                b.append(key)
            else:
                bin_count = b.index(key) + 1
            if bin_count >= TREEIFY_THRESHOLD:
                self._treeify_bin(i)
        else:
            if new:
                x = _Node(key, h)
                b.root, _ = _tree_insert(b.root, x)
                b.order.insert(0, x)  # TreeBin.putTreeVal: the new node becomes `first`
                b.nodes[key] = x
            bin_count = 2
        if not new:
            return False  # a replaced value: no addCount
        self.size += 1
        self._add_count(bin_count)
        return True

    def remove(self, key: str) -> bool:
        h = self._hash.pop(key, None)
        if h is None or self.table is None:
            return False
        tab = self.table
        i = (len(tab) - 1) & h
        b = tab[i]
        if isinstance(b, list):
            b.remove(key)
            if not b:
                tab[i] = None
        elif b is not None:
            p = b.nodes.pop(key)
            b.order.remove(p)
            if not b.order:
                tab[i] = None
            elif _too_small(b.root):
                tab[i] = [n.key for n in b.order]  # untreeify
            else:
                b.root = _tree_delete(b.root, p, hashmap=False)
        self.size -= 1  # addCount(-1, -1): never resizes
        return True

    def _init_table(self) -> None:
        n = self.size_ctl if self.size_ctl > 0 else 16
        self.table = [None] * n
        self.size_ctl = n - (n >> 2)

    def _add_count(self, check: int) -> None:
        if check < 0 or (self.counter_cells and check <= 1):
            return
        while (self.size >= self.size_ctl and self.table is not None
               and len(self.table) < MAXIMUM_CAPACITY):
            self._transfer()

    def _try_presize(self, size: int) -> None:
        c = (MAXIMUM_CAPACITY if size >= (MAXIMUM_CAPACITY >> 1)
             else table_size_for(size + (size >> 1) + 1))
        while self.size_ctl >= 0:
            sc = self.size_ctl
            if self.table is None or len(self.table) == 0:
                n = sc if sc > c else c
                self.table = [None] * n
                self.size_ctl = n - (n >> 2)
            elif c <= sc or len(self.table) >= MAXIMUM_CAPACITY:
                break
            else:
                self._transfer()

    def _treeify_bin(self, i: int) -> None:
        tab = self.table
        assert tab is not None
        n = len(tab)
        if n < MIN_TREEIFY_CAPACITY:
            self._try_presize(n << 1)
            return
        b = tab[i]
        if isinstance(b, list):
            nodes = [_Node(k, self._hash[k]) for k in b]
            tab[i] = _Tree(nodes, _build_tree(nodes))

    def _transfer(self) -> None:
        """Double the table (bin ``i`` feeds only bins ``i`` and ``i + n``)."""
        tab = self.table
        assert tab is not None
        n = len(tab)
        new: list[_Bin | None] = [None] * (n << 1)
        hashes = self._hash
        for i in range(n - 1, -1, -1):
            b = tab[i]
            if b is None:
                continue
            if isinstance(b, list):
                lo, hi = split_chain(b, [hashes[k] & n for k in b])
                if lo:
                    new[i] = lo
                if hi:
                    new[i + n] = hi
                continue
            lo_n = [x for x in b.order if not x.hash & n]
            hi_n = [x for x in b.order if x.hash & n]
            for side, at, other in ((lo_n, i, hi_n), (hi_n, i + n, lo_n)):
                if not side:
                    continue
                if len(side) <= UNTREEIFY_THRESHOLD:
                    new[at] = [x.key for x in side]
                elif other:
                    fresh = [_Node(x.key, x.hash) for x in side]
                    new[at] = _Tree(fresh, _build_tree(fresh))
                else:
                    new[at] = b
        self.table = new
        self.size_ctl = (n << 1) - (n >> 1)


def split_chain(chain: Sequence[str], bits: Sequence[int]) -> tuple[list[str], list[str]]:
    """``ConcurrentHashMap.transfer`` of one list bin: (low half, high half).

    ``lastRun`` is the start of the longest tail whose keys all go to the same half; that tail
    keeps its order, every key before it is prepended to its half (so they come out reversed).
    """
    run_bit = bits[0]
    last_run = 0
    for idx in range(1, len(bits)):
        if bits[idx] != run_bit:
            run_bit = bits[idx]
            last_run = idx
    lo: list[str] = []
    hi: list[str] = []
    for idx in range(last_run - 1, -1, -1):
        (hi if bits[idx] else lo).append(chain[idx])
    (hi if run_bit else lo).extend(chain[last_run:])
    return lo, hi


# --- orders of maps filled one put at a time -----------------------------------------------------
def hashset_copy_capacity(size: int) -> int:
    """The table length of ``new HashSet<>(collection)``: ``HashMap(max((int) (n / .75f) + 1,
    16))``, the division in ``float``."""
    return table_size_for(max(int(_f32(_f32(float(size)) / _f32(0.75))) + 1, 16))


def hashset_copy_order(keys: Iterable[str]) -> list[str]:
    """``new HashSet<>(collection)`` of ``keys`` (in the collection's order) as it iterates: a
    table of :func:`hashset_copy_capacity` buckets, one ``add`` per key."""
    items = list(dict.fromkeys(keys))
    return java_hash_order(items, capacity=hashset_copy_capacity(len(items)))


def hashmap_copy_capacity(size: int) -> int:
    """The table length of ``new HashMap<>(map)`` of ``size`` entries (``putMapEntries``:
    ``tableSizeFor((int) (size / 0.75f + 1.0f))``, in ``float``; 12 entries: 32 buckets, where
    12 single puts leave 16). 0: no table (an empty copy never makes one)."""
    if size <= 0:
        return 0
    return table_size_for(_f2i(_f32(_f32(_f32(float(size)) / _f32(0.75)) + 1.0)))


def hashmap_copy_order(source_order: Iterable[str]) -> list[str]:
    """``new HashMap<>(map)`` of a map that iterates ``source_order``: a table of
    :func:`hashmap_copy_capacity` buckets, then one ``putVal`` per entry in the source's order
    (a chain reaching 9 keys below 64 buckets still grows it: :func:`hash_fill`)."""
    items = list(dict.fromkeys(source_order))
    return hash_fill(items, hashmap_copy_capacity(len(items)))[0]


def concurrent_copy_order(source_order: Iterable[str]) -> list[str]:
    """``new ConcurrentHashMap<>(map)`` of a map that iterates ``source_order``, as it iterates.

    The copy constructor sets ``sizeCtl`` to 16 and calls ``putAll``, which first
    ``tryPresize`` s for the source's size — ``tableSizeFor(n + n/2 + 1)``, and since that loop
    goes on until the target is at most 3/4 of the table, a copy of 12 keys gets 64 buckets where
    12 single puts leave 32 — then puts every entry in the source's order. A different table
    from the source's, and so (from 12 keys on, or with colliding bucket mates) a different order:
    ``ExtensibleLoadManagerImpl.selectAsync``'s candidates are such a copy of the broker
    registry's map (:class:`JavaConcurrentHashMap`, checked against the JDK by
    tests/model/test_concurrent_copy_jdk.py)."""
    return JavaConcurrentHashMap.copy_of(source_order).keys()


def java_sorted(keys: Iterable[str]) -> list[str]:
    """``keys`` sorted as ``Collections.sort`` sorts strings (``String.compareTo``: UTF-16 code
    units, then length), which differs from Python's code-point order above U+FFFF."""
    return sorted(dict.fromkeys(keys), key=_utf16)


def cleared_capacity(capacity: int, size: int) -> int:
    """The table length of a ``HashMap``/``HashSet`` of table length ``capacity`` (0: none yet)
    that is ``clear()`` ed and then given ``size`` keys one ``put``/``add`` at a time: the table
    is kept (``clear`` never shrinks it), made at 16 on the first put when there was none, and
    doubles while the size exceeds 3/4 of it. From the counts alone: a chain of 9 colliding
    keys grows a table below 64 buckets earlier (``HashMap.treeifyBin``), which only
    :func:`hash_fill`, given the keys in order, follows. No put: unchanged."""
    if size <= 0:
        return capacity
    cap = capacity or 16
    while size > cap * 3 // 4 and cap < MAXIMUM_CAPACITY:  # (int) (length * 0.75f)
        cap <<= 1
    return cap


def hashmap_capacity(size: int) -> int:
    """Capacity of a ``HashMap`` after ``size`` single ``put`` calls, from the count alone (a
    chain of 9 keys below 64 buckets grows it earlier: :func:`hash_fill`)."""
    cap = 16
    while size > cap * 3 // 4:
        cap <<= 1
    return cap


def concurrent_capacity(size: int) -> int:
    """Capacity of a ``new ConcurrentHashMap<>()`` after ``size`` single puts (no tree bins)."""
    cap = 16
    while size >= cap * 3 // 4:
        cap <<= 1
    return cap


def java_hash_order(keys: Iterable[str], *, capacity: int | None = None,
                    start: int = 0) -> list[str]:
    """``keys`` (in insertion order) as a ``HashMap``/``HashSet`` filled one ``put`` at a time
    iterates them: by bucket, then insertion order (resizes keep it). ``capacity``: the table
    length the map has from its first put to its last (a ``clear()`` ed map's kept table, or the
    one ``new HashMap<>(n)`` makes; the puts must not outgrow it). Else ``start``: the table a
    ``clear()`` ed map kept, which the puts may grow (doubling when the size exceeds 3/4); else
    a ``new HashMap<>()``, 16 buckets doubling so. :func:`hash_fill` also gives the table length
    the puts leave."""
    return hash_fill(keys, capacity or start)[0]


def hash_fill(keys: Iterable[str], start: int = 0) -> tuple[list[str], int]:
    """``keys`` put one at a time into a ``HashMap``/``HashSet`` whose table is ``start`` long
    (a ``clear()`` ed map keeps its table; 0: ``new HashMap<>()``, 16 buckets at the first put):
    the order it then iterates them in, and the table length it is left with, which a map kept
    across calls carries to the next fill (``start`` itself when nothing is put).

    A chain of 9 keys is not a chain any more (JDK 17 ``HashMap.putVal`` → ``treeifyBin``): in
    a table of 64 buckets or more it becomes a tree bin, which iterates its root first and links
    each later key right after its tree parent (``TreeNode.treeify``, ``putTreeVal``,
    ``moveRootToFront``; ``resize`` splits it keeping that order, a half of 6 keys or fewer
    back to a chain); in a shorter table the table doubles instead (``treeifyBin`` calls
    ``resize`` below ``MIN_TREEIFY_CAPACITY``), earlier than the size alone would double it, and
    that longer table is what the map keeps. Strings that collide (``"Aa"``/``"BB"``) or names
    that share a bucket by chance get there. When some chain does (:func:`_chain_reaches_tree`)
    the answer is :class:`JavaHashMap`'s, put by put from the ``start`` table: both the order
    and the length then depend on the order of the puts, not only on the keys. Otherwise it is
    the bucket sort, and the length the 3/4 rule gives (:func:`cleared_capacity`)."""
    items = list(dict.fromkeys(keys))
    if not items:
        return [], start
    plain = _plain_fill(items, start)
    if plain is None:
        m = JavaHashMap(start or None)
        for k in items:
            m.put(k)
        return m.keys(), m.capacity
    buckets, final = plain
    # by bucket, then put order: a stable sort of the positions on their bucket alone
    return list(map(items.__getitem__, sorted(range(len(items)), key=buckets.__getitem__))), final


def _plain_fill(items: Sequence[str], start: int) -> tuple[list[int], int] | None:
    """The bucket of each of ``items`` (distinct, put in order into a table of ``start``, 0 for
    none) in the table they leave, and its length; ``None`` when some chain reaches 9 keys on
    the way (then only :class:`JavaHashMap` knows)."""
    hashes = list(map(_spread_hash, items))
    first = start or 16
    final = cleared_capacity(first, len(items))
    buckets = list(map((final - 1).__and__, hashes))
    if len(items) > TREEIFY_THRESHOLD and _chain_reaches_tree(hashes, buckets, first, final):
        return None
    return buckets, final


def refill_order(puts: Iterable[str], start: int, kept: Collection[str],
                 again: Iterable[str] | None = None) -> list[str]:
    """A kept ``HashMap``/``HashSet`` of table ``start`` (0: a new one) given ``puts``, then
    every key not in ``kept`` removed, then ``again`` (the same keys; ``puts`` when not given)
    put without a ``clear()`` (the modular ``selectBroker`` restoring its candidates, or
    re-checking an overloaded pick, with ``applyNamespacePolicies``): the order it then
    iterates. A key put back goes to the end of its bucket's chain (``putVal`` appends), after
    the keys that stayed; in a tree bin (a chain of 9) it goes where ``putTreeVal`` links it,
    after the removals' ``removeTreeNode`` (lbctl removes in the set's iteration order).
    :func:`refill_fill` also gives the table length the refill leaves."""
    return refill_fill(puts, start, kept, again)[0]


def refill_fill(puts: Iterable[str], start: int, kept: Collection[str],
                again: Iterable[str] | None = None) -> tuple[list[str], int]:
    """:func:`refill_order`, and the table length the set is left with, which the set keeps
    for its next ``clear()`` and fill (``HashSet.clear`` keeps the table), in this cycle and the
    next. It is the fill's own (:func:`hash_fill`) unless a key put back makes a chain of 9 in a
    table below 64 buckets: ``putVal`` then calls ``treeifyBin``, which doubles the table
    instead — a second growth the first fill did not make, when the removals had brought a
    9-chain down and the put back raises it again (a tree bin that shrank to a chain of 6 or
    fewer at a removal, ``untreeify``, and is put back to 9, ``treeifyBin`` again)."""
    items = list(dict.fromkeys(puts))
    plain = _plain_fill(items, start)
    if plain is None:
        m = JavaHashMap(start or None)
        for k in items:
            m.put(k)
        gone = [k for k in m.keys() if k not in kept]  # noqa: SIM118 (a JavaHashMap, not a dict)
        for k in gone:
            m.remove(k)
        for k in items if again is None else again:
            m.put(k)
        return m.keys(), m.capacity
    buckets, final = plain
    # within a bucket: the keys that stayed, in the fill's put order, then those put back, in
    # the refill's put order; no chain reached 9 with every key in, so none does when the same
    # keys are put back
    back = {k: i for i, k in enumerate(dict.fromkeys(items if again is None else again))}
    decorated = sorted((b, k not in kept, i if k in kept else back.get(k, i), k)
                       for i, (b, k) in enumerate(zip(buckets, items, strict=True)))
    return [k for _, _, _, k in decorated], final


def bucket_order(keys: Iterable[str], capacity: int) -> list[str]:
    """``keys`` by their bucket in a table of ``capacity``, each bucket in the given order: the
    order any subset of them iterates in a map of that table filled in this order, as long as
    no bucket of the subset holds 9 keys (then :func:`java_hash_order` of the subset itself).
    Not a map's order when ``keys`` outnumber the table (lbctl sorts all the available brokers
    so, to take each fill's brokers from them)."""
    items = list(dict.fromkeys(keys))
    buckets = list(map((capacity - 1).__and__, map(_spread_hash, items)))
    return list(map(items.__getitem__, sorted(range(len(items)), key=buckets.__getitem__)))


def _chain_reaches_tree(hashes: Sequence[int], buckets: Sequence[int], first: int,
                        final: int) -> bool:
    """Whether putting keys of these ``HashMap.hash`` es in order makes some chain 9 long (then
    ``putVal`` calls ``treeifyBin``). ``buckets``: their indexes in the ``final`` table, which
    holds them all; the puts begin in the ``first`` table, and each shorter length held the keys
    put up to its resize (past 3/4). Chains only grow between resizes, so looking at each table
    once, with every key it held, is enough."""
    if max(Counter(buckets).values()) > TREEIFY_THRESHOLD:
        return True
    table = first
    while table < final:
        held = table * 3 // 4 + 1  # the put past 3/4 resizes after it
        if max(Counter(map((table - 1).__and__, hashes[:held])).values()) > TREEIFY_THRESHOLD:
            return True
        table <<= 1
    return False


def hashmap_order(keys: Iterable[str], initial_capacity: int | None = None) -> list[str]:
    """``new HashMap<>()`` (or ``(initial_capacity)``), one ``put`` per key, exactly."""
    m = JavaHashMap(initial_capacity)
    for k in keys:
        m.put(k)
    return m.keys()


def concurrent_order(keys: Iterable[str], initial_capacity: int | None = None) -> list[str]:
    """``new ConcurrentHashMap<>()`` (or ``(initial_capacity)``), one ``put`` per key, exactly.

    A function of the keys (in order) alone: the orders of the last few small key lists (a
    sequence's brokers, cycle after cycle) are kept."""
    items = tuple(keys)
    if len(items) > _CONCURRENT_MEMO_KEYS:
        return _concurrent_order(items, initial_capacity)
    memo_key = (items, initial_capacity)
    hit = _CONCURRENT_MEMO.get(memo_key)
    if hit is None:
        if len(_CONCURRENT_MEMO) >= 16:
            _CONCURRENT_MEMO.clear()
        hit = _CONCURRENT_MEMO[memo_key] = tuple(_concurrent_order(items, initial_capacity))
    return list(hit)


_CONCURRENT_MEMO: dict[tuple[tuple[str, ...], int | None], tuple[str, ...]] = {}
_CONCURRENT_MEMO_KEYS = 4096


def _concurrent_order(keys: Iterable[str], initial_capacity: int | None) -> list[str]:
    m = JavaConcurrentHashMap(initial_capacity)
    for k in keys:
        m.put(k)
    return m.keys()


@dataclass(frozen=True, slots=True)
class MapHistory:
    """What a long-lived ``ConcurrentHashMap`` of the leader saw: every ``put`` of a new key and
    every ``remove`` of a present one, in order (``keys``, with ``puts`` holding 1 for a put and
    0 for a removal), and the keys present now (``live``), in the order they were put
    (:meth:`in_order`).

    Pulsar's leader keeps its ``LoadData`` maps for its whole term: a key put cycles ago keeps its
    place, a removed one leaves it, and the table never shrinks, so the iteration order depends on
    the history, not only on today's keys (:class:`ConcurrentOrder` replays it). Kept without an
    object per operation: a map of 200,000 bundles is filled in one go."""

    keys: tuple[str, ...] = ()
    puts: bytes = b""
    #: its values mean nothing (a first fill may be the caller's own dict, never mutated after);
    #: ``keys`` and ``puts`` determine it, so it takes no part in equality
    live: Mapping[str, object] = field(default_factory=dict, compare=False)
    #: the table length (0: no put yet) when every resize doubles it: after each put the size
    #: stays below 3/4 of it; removals never shrink it
    capacity: int = 0
    #: ``live``'s keys in put order when ``live`` itself iterates in another order (a first fill
    #: from a lookup table in the snapshot's order, :meth:`then_puts`'s ``order``); ``None``:
    #: ``live``'s own order is the put order
    order: Sequence[str] | None = field(default=None, compare=False)

    def in_order(self) -> Iterable[str]:
        """The keys present now, in the order they were put (what the map's history and the
        next cycle's removals follow)."""
        return self.live if self.order is None else self.order

    @property
    def ops(self) -> list[tuple[str, bool]]:
        """The operations as ``(key, True)`` for a put, ``(key, False)`` for a removal."""
        return [(k, bool(p)) for k, p in zip(self.keys, self.puts, strict=True)]

    def then(self, ops: Iterable[tuple[str, bool]]) -> MapHistory:
        """This history followed by ``ops`` (a put of a present key, or a removal of an absent
        one, changes nothing and is not recorded); this very history when nothing changes."""
        live = dict.fromkeys(self.in_order())
        keys: list[str] = []
        puts = bytearray()
        cap = self.capacity
        for key, put in ops:
            if put and key not in live:
                live[key] = None
                keys.append(key)
                puts.append(1)
                cap = _grown(cap, len(live))
            elif not put and key in live:
                del live[key]
                keys.append(key)
                puts.append(0)
        if not keys:
            return self
        return MapHistory(self.keys + tuple(keys), self.puts + bytes(puts), live, cap)

    def then_puts(self, puts: Iterable[str], removes: Iterable[str] = (),
                  order: Sequence[str] | None = None) -> MapHistory:
        """:meth:`then` with every put first, then every removal of a key present before the puts:
        the same history, built without a step per key in Python.

        ``order``: for a first fill from a dict, the dict's keys in the order they are put when
        the dict iterates in another (the reader's table of every bundle, in the snapshot's
        order): the dict is kept as the lookup table, ``order`` as the put order."""
        known = self.live
        if not known and type(puts) is dict:
            # a first fill from a dict takes that dict as the live map (no copy of its keys: at
            # 1,000,000 bundles a second table of every name costs 0.3 s); the caller never
            # mutates it. Nothing known: nothing to remove; one tuple of the keys, no list
            new = tuple(puts if order is None else order)
            if not new:
                return self
            assert len(new) == len(puts)
            return MapHistory(self.keys + new, self.puts + b"\x01" * len(new), puts,
                              _grown(self.capacity, len(new)), None if order is None else new)
        fresh = dict.fromkeys(puts if order is None else order)
        added = [k for k in fresh if k not in known]
        gone = [k for k in dict.fromkeys(removes) if k in known]
        if not added and not gone:
            return self
        live: dict[str, object] = dict.fromkeys(self.in_order())  # drops a first fill's values
        live.update(dict.fromkeys(added))
        for k in gone:
            del live[k]
        cap = _grown(self.capacity, len(live) + len(gone)) if added else self.capacity
        return MapHistory(self.keys + tuple(added) + tuple(gone),
                          self.puts + b"\x01" * len(added) + b"\x00" * len(gone), live, cap)


def _grown(capacity: int, size: int) -> int:
    """The table length once the size reached ``size`` by puts: doubled while the size is at
    least 3/4 of it (``ConcurrentHashMap.addCount``; 16 on the first put)."""
    cap = capacity or 16
    while size >= cap - (cap >> 2):
        cap <<= 1
    return cap


class ConcurrentOrder:
    """The order of a ``new ConcurrentHashMap<>()`` filled one ``put`` per key of ``keys`` (or, with
    ``history``, through its puts and removals), answered per bucket so that a large map need not
    be simulated in full.

    The table length only depends on the size after each put (as long as no chain reaches 9 keys),
    so a key's bucket is known from its hash; the order *inside* a bucket depends on the keys that
    shared its ancestors' buckets at each resize. :meth:`bucket` replays just that lineage: at each
    table length ``c`` the puts (appended) and removals (unlinked) made while the table had length
    ``c`` with the bucket's residue are applied, then :func:`split_chain` keeps the half that leads
    to the bucket. Maps of up to ``exact_limit`` keys, and any map where a chain would reach 9 keys
    (tree bins, early growth), are simulated in full with :class:`JavaConcurrentHashMap`.
    """

    def __init__(self, keys: Sequence[str], exact_limit: int = 4096,
                 history: MapHistory | None = None):
        if history is None:
            self._op_keys: Sequence[str] = keys
            self._op_puts: bytes | None = None  # every operation a put
            self.keys = keys
        else:
            self._op_keys = history.keys
            self._op_puts = history.puts
            self.keys = list(history.in_order())
        self.size = len(self.keys)
        self._full: JavaConcurrentHashMap | None = None
        self._levels: dict[int, dict[int, list[tuple[str, bool]]]] | None = None
        self._buckets: dict[int, list[str]] = {}
        self.capacity = (concurrent_capacity(self.size) if history is None
                         else history.capacity or 16)
        if self.size <= exact_limit or not self._grows_normally():
            self._simulate()

    def _grows_normally(self) -> bool:
        """Whether the operations a table under 64 buckets sees leave it where doubling would: a
        chain of 9 keys there would have grown it 8-fold at once."""
        head = JavaConcurrentHashMap()
        cap = 16
        for key, put in self._ops():
            if put:
                if head.put(key) and len(head) >= cap - (cap >> 2):
                    cap <<= 1
            else:
                head.remove(key)
            if cap >= 64:
                break
        return max(head.capacity, 16) == cap

    def _ops(self) -> Iterator[tuple[str, bool]]:
        if self._op_puts is None:
            return ((k, True) for k in self._op_keys)
        return ((k, p == 1) for k, p in zip(self._op_keys, self._op_puts, strict=True))

    def _simulate(self) -> JavaConcurrentHashMap:
        m = JavaConcurrentHashMap()
        for key, put in self._ops():
            if put:
                m.put(key)
            else:
                m.remove(key)
        self._full = m
        self.capacity = max(m.capacity, 16)
        return m

    def order(self) -> list[str]:
        """Every key, in the map's iteration order (simulates the whole map)."""
        m = self._full if self._full is not None else self._simulate()
        return m.keys()

    def bucket(self, index: int) -> list[str]:
        """The keys of one bucket of the final table, in iteration order."""
        if self._full is not None:
            return self._full.bin(index)
        hit = self._buckets.get(index)
        if hit is None:
            hit = self._lineage(index)
            if hit is None:  # a chain would reach 9 keys: simulate everything
                return self._simulate().bin(index & (self.capacity - 1))
            self._buckets[index] = hit
        return hit

    def _index(self) -> dict[int, dict[int, list[tuple[str, bool]]]]:
        """Table length → residue → the puts and removals made while the table had that length
        (in order)."""
        if self._levels is None:
            levels: dict[int, dict[int, list[tuple[str, bool]]]] = {}
            cap, size, seen = 16, 0, set()
            for key, put in self._ops():
                if put:
                    if key in seen:
                        continue
                    seen.add(key)
                    size += 1
                elif key in seen:
                    seen.discard(key)
                    size -= 1
                else:
                    continue
                levels.setdefault(cap, {}).setdefault(_chm_spread(key) & (cap - 1), []).append(
                    (key, put))
                if put and size >= cap - (cap >> 2):  # the put bringing the size to 3/4 resizes
                    cap <<= 1
            self._levels = levels
        return self._levels

    def _lineage(self, index: int) -> list[str] | None:
        levels = self._index()
        chain: list[str] = []
        cap = 16
        while True:
            for key, put in levels.get(cap, {}).get(index & (cap - 1), []):
                if put:
                    chain.append(key)
                else:
                    chain.remove(key)
                if len(chain) > TREEIFY_THRESHOLD:
                    return None
            if cap >= self.capacity:
                return chain
            if len(chain) > 1:
                lo, hi = split_chain(chain, [_chm_spread(k) & cap for k in chain])
                chain = hi if index & cap else lo
            elif chain and bool(_chm_spread(chain[0]) & cap) != bool(index & cap):
                chain = []
            cap <<= 1


# --- Guava ArrayListMultimap --------------------------------------------------------------------
def guava_expected_size_capacity(expected_size: int, buckets: int = 16) -> int:
    """``Maps.capacity(n)``: ``(int)(n / 0.75f + 1.0f)`` up to Guava 31.1 (``buckets=32``, the
    outcome for the multimap's 12 expected keys), ``(int) Math.ceil(n / 0.75)`` from Guava 32.0
    (``buckets=16``). Both give ``n + 1`` below 3."""
    if expected_size < 3:
        return expected_size + 1
    if buckets == 32:
        return _f2i(_f32(_f32(_f32(float(expected_size)) / _f32(0.75)) + 1.0))
    return math.ceil(expected_size / 0.75)


def multimap_capacity(keys: int, buckets: int = 16, reused: int = 0) -> int:
    """Table length of an ``ArrayListMultimap.create()``'s backing ``HashMap`` holding ``keys``
    keys: it starts at ``buckets`` (16 on Guava 32+, 32 on Guava ≤ 31.1) and doubles when the size
    exceeds 3/4; a multimap reused with ``clear()`` keeps the ``reused`` length it grew to. From
    the count alone: :func:`multimap_key_order` follows the keys, whose chains of 9 can grow
    the table earlier."""
    cap = max(buckets, reused)
    while keys > cap * 3 // 4:
        cap <<= 1
    return cap


def multimap_key_order(keys: Iterable[str], buckets: int = 16,
                       reused: int = 0) -> tuple[list[str], int]:
    """``Multimap.asMap()`` key order (keys given in first-insertion order) and the table length,
    to carry to the next cycle when the shedder reuses its multimap."""
    return hash_fill(keys, max(buckets, reused))
