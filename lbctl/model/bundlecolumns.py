"""Bundle data as numpy columns: the simulator's leader-side ``bundleData`` at 10,000s of bundles.

A simulated cycle samples every reported bundle (``BundleData.update``, see
:mod:`lbctl.simulate.sampling`) and re-sums every broker's bundles
(``TimeAverageBrokerData.reset``). Done per object in Python that is most of a cycle; done here per
column it is the same IEEE arithmetic in the same order, so every figure is bit-identical:

* a sample is ``((n − 1) · x + new) / n`` with ``n = min(n + 1, max)``: an integer count times a
  float64, plus a float64, over the count — Python converts the integers to float64 exactly, as
  the casts here do, and numpy fuses nothing;
* a broker's sums add its bundles left to right, as Java (and the Python path) does: the columns
  are gathered into a broker × position matrix (short brokers padded with ``+0.0``, which leaves a
  sum starting at ``0.0`` unchanged) and added one position at a time — never ``np.sum`` or
  ``reduceat``, whose pairwise summation rounds differently.

numpy is optional (the core install is light): :func:`numpy_or_none` returns it when installed and
not disabled with ``LBCTL_NO_NUMPY=1`` (the benchmarks' baseline); otherwise callers keep the Python
path, which gives the same results.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from lbctl.model.bundle import count_system_bundles
from lbctl.model.load import (
    NUM_LONG_SAMPLES,
    NUM_SHORT_SAMPLES,
    BundleData,
    NamespaceBundleStats,
    TimeAverageBrokerData,
    TimeAverageMessageData,
)

_new = object.__new__
_set = object.__setattr__
_FIELDS = ("msgThroughputIn", "msgThroughputOut", "msgRateIn", "msgRateOut")


def numpy_or_none() -> Any:
    """numpy when installed and not disabled by ``LBCTL_NO_NUMPY=1``, else ``None``."""
    if os.environ.get("LBCTL_NO_NUMPY", "") not in ("", "0"):
        return None
    try:
        import numpy
    except ImportError:  # the core install: the Python path
        return None
    return numpy


#: the last gather matrix of :meth:`BundleColumns.time_averages`: (key index, the groups' keys,
#: matrix), reused by the next columns sharing that index (a sequence's next cycle)
_GATHER: list[tuple[dict[str, int], tuple[tuple[str, ...], ...], Any]] = []


def _window(m: int, n: int, vals: Sequence[float]) -> TimeAverageMessageData:
    w = _new(TimeAverageMessageData)
    _set(w, "maxSamples", m)
    _set(w, "numSamples", n)
    _set(w, "msgThroughputIn", vals[0])
    _set(w, "msgThroughputOut", vals[1])
    _set(w, "msgRateIn", vals[2])
    _set(w, "msgRateOut", vals[3])
    return w


class StatsColumns:
    """The reported stats of one cycle as columns, rebuilt only when a stats object changed."""

    __slots__ = ("objs", "topics", "vals")

    def __init__(self, np: Any, objs: list[NamespaceBundleStats]):
        self.objs = objs
        self.vals: Any = np.array(  # one list per field: faster than a tuple per object
            [[s.msgThroughputIn for s in objs], [s.msgThroughputOut for s in objs],
             [s.msgRateIn for s in objs], [s.msgRateOut for s in objs]],
            dtype=np.float64).reshape(4, len(objs))
        self.topics = [s.topics for s in objs]


class BundleColumns(Mapping[str, BundleData]):
    """Every bundle's ``BundleData`` as columns; an entry is built as an object when first read.

    Rows of ``vals`` (float64): short-term throughput in/out, rate in/out, then the same long-term.
    ``n`` and ``m`` (int64, 2 rows: short, long): samples taken and window size.
    """

    __slots__ = ("_avg", "_avg_keys", "_built", "_index", "_keys", "_long", "_over", "_short",
                 "_system", "m", "n", "np", "topics", "vals")

    def __init__(self, np: Any, keys: list[str], n: Any, m: Any, vals: Any, topics: list[int],
                 index: dict[str, int] | None = None):
        self.np = np
        self._keys = keys
        self._index = index if index is not None else {k: i for i, k in enumerate(keys)}
        self.n, self.m, self.vals, self.topics = n, m, vals, topics
        self._built: dict[str, BundleData] = {}
        self._avg: dict[int, tuple[Mapping[str, Any], TimeAverageBrokerData]] = {}
        self._avg_keys: dict[tuple[str, ...], TimeAverageBrokerData] = {}
        self._system: dict[bool, int] = {}
        self._long: dict[str, tuple[float, float]] | None = None
        self._short: dict[str, float] | None = None
        self._over: dict[tuple[int, int], frozenset[str]] = {}

    @classmethod
    def of(cls, np: Any, data: Mapping[str, BundleData]) -> BundleColumns:
        """Columns holding exactly ``data`` (its order kept)."""
        keys = list(data)
        rows = [(d.shortTermData, d.longTermData) for d in data.values()]
        n = np.array([[s.numSamples for s, _ in rows], [lt.numSamples for _, lt in rows]],
                     dtype=np.int64).reshape(2, len(keys))
        m = np.array([[s.maxSamples for s, _ in rows], [lt.maxSamples for _, lt in rows]],
                     dtype=np.int64).reshape(2, len(keys))
        vals = np.array([tuple(getattr(w, f) for w in pair for f in _FIELDS) for pair in rows],
                        dtype=np.float64).reshape(len(keys), 8).T.copy()
        return cls(np, keys, n, m, vals, [d.topics for d in data.values()])

    # --- Mapping --------------------------------------------------------------------------------
    def __getitem__(self, bundle: str) -> BundleData:
        data = self._built.get(bundle)
        if data is None:
            i = self._index[bundle]
            col = self.vals[:, i].tolist()
            n0, n1 = self.n[:, i].tolist()
            m0, m1 = self.m[:, i].tolist()
            data = _new(BundleData)
            _set(data, "shortTermData", _window(m0, n0, col[:4]))
            _set(data, "longTermData", _window(m1, n1, col[4:]))
            _set(data, "topics", self.topics[i])
            self._built[bundle] = data
        return data

    def get(self, bundle: str, default: BundleData | None = None) -> BundleData | None:  # type: ignore[override]  # Mapping.get's overloads, one signature
        return self[bundle] if bundle in self._index else default

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, bundle: object) -> bool:
        return bundle in self._index

    def key_index(self) -> Mapping[str, int]:
        """bundle → its column (read-only)."""
        return self._index

    # --- one sample of every reported bundle ------------------------------------------------------
    def sampled(self, reported: Mapping[str, NamespaceBundleStats],
                cache: list[StatsColumns], times: int = 1) -> BundleColumns:
        """``updateBundleData``: every bundle of ``reported`` sampled ``times`` times (a new one
        starts from its first sample, then ``times - 1`` more, as
        :class:`lbctl.model.loaddata.BundleDataView` does); bundles not reported are dropped.
        ``cache`` (kept by the caller, one slot) holds the last stats columns, reused while the
        stats objects are the same."""
        np = self.np
        keys = list(reported)
        objs = list(reported.values())
        stats = cache[0] if cache else None
        if stats is None or stats.objs != objs:  # list == compares identity first: C speed
            stats = StatsColumns(np, objs)
            cache[:] = [stats]
        same_keys = keys == self._keys
        if same_keys:
            n_old, m, old = self.n, self.m, self.vals
            fresh = None
        else:
            get = self._index.get
            pos = np.fromiter((get(k, -1) for k in keys), dtype=np.intp, count=len(keys))
            fresh = pos < 0
            at = np.where(fresh, 0, pos) if len(self._keys) else np.zeros(len(keys), np.intp)
            if len(self._keys):
                n_old, m, old = self.n[:, at], self.m[:, at], self.vals[:, at]
            else:
                n_old = np.zeros((2, len(keys)), np.int64)
                m = np.zeros((2, len(keys)), np.int64)
                old = np.zeros((8, len(keys)), np.float64)
            m = m.copy()
            m[0, fresh] = NUM_SHORT_SAMPLES
            m[1, fresh] = NUM_LONG_SAMPLES
        new8 = np.concatenate((stats.vals, stats.vals))
        n, vals = n_old, old
        for t in range(max(times, 1)):
            if t < times:
                n = np.minimum(n + 1, m)
                k8 = np.repeat((n - 1).astype(np.float64), 4, axis=0)
                n8 = np.repeat(n.astype(np.float64), 4, axis=0)
                vals = (k8 * vals + new8) / n8
            if t == 0 and fresh is not None and fresh.any():
                vals, n = vals.copy(), n.copy()
                vals[:, fresh] = new8[:, fresh]  # the first sample replaces the defaults
                n[:, fresh] = 1
        out = BundleColumns(np, keys, n, m, vals, stats.topics,
                            self._index if same_keys else None)
        if same_keys:
            out._system = self._system
        return out

    # --- what a cycle reads of all bundles --------------------------------------------------------
    def long_term_totals(self) -> Mapping[str, tuple[float, float]]:
        """Every bundle's long-term ``(msgRateIn + msgRateOut, msgThroughputIn +
        msgThroughputOut)`` (``TimeAverageMessageData.msg_rate``/``throughput``, the same adds),
        for the split check that reads every bundle."""
        if self._long is None:
            v = self.vals
            self._long = dict(zip(self._keys, zip((v[6] + v[7]).tolist(),
                                                   (v[4] + v[5]).tolist(), strict=True),
                                  strict=True))
        return self._long

    def long_term_over(self, max_rate: int, max_bandwidth: int) -> frozenset[str]:
        """The bundles whose long-term ``msgRateIn + msgRateOut`` exceeds ``max_rate`` or whose
        ``msgThroughputIn + msgThroughputOut`` exceeds ``max_bandwidth`` (the split check's two
        figures, the same float64 adds as :meth:`long_term_totals`; NaN exceeds nothing).
        Both limits must be integers a float64 holds exactly (|x| < 2**53): then the column
        comparison is Python's exact float-to-int comparison."""
        key = (max_rate, max_bandwidth)
        hit = self._over.get(key)
        if hit is None:
            v = self.vals
            flags = ((v[6] + v[7]) > float(max_rate)) | ((v[4] + v[5]) > float(max_bandwidth))
            keys = self._keys
            hit = self._over[key] = frozenset(keys[i] for i in self.np.flatnonzero(flags).tolist())
        return hit

    def short_term_throughputs(self) -> Mapping[str, float]:
        """Every bundle's short-term ``msgThroughputIn + msgThroughputOut`` (what the greedy
        selectors rank by, the same float64 add as on the built object), once per columns."""
        if self._short is None:
            v = self.vals
            self._short = dict(zip(self._keys, (v[0] + v[1]).tolist(), strict=True))
        return self._short

    def system_bundles(self, pulsar_system: bool) -> int:
        """:func:`lbctl.model.bundle.count_system_bundles` over the keys, once per key set."""
        c = self._system.get(pulsar_system)
        if c is None:
            c = self._system[pulsar_system] = count_system_bundles(self._keys, pulsar_system)
        return c

    def time_averages(self, groups: Sequence[Mapping[str, Any]]
                      ) -> list[TimeAverageBrokerData] | None:
        """``TimeAverageBrokerData.reset`` over each group's keys (a broker's ``lastStats``),
        summed left to right; ``None`` when a key has no data here (the caller's Python path)."""
        np = self.np
        if len(self._avg) > 2 * len(groups):  # reports since replaced: let them go
            self._avg.clear()
        if len(self._avg_keys) > 2 * len(groups):
            self._avg_keys.clear()
        out: list[TimeAverageBrokerData | None] = []
        todo: list[tuple[int, Mapping[str, Any], tuple[str, ...]]] = []
        for g, bundles in enumerate(groups):
            memo = self._avg.get(id(bundles))
            if memo is not None and memo[0] is bundles:
                out.append(memo[1])
                continue
            # the sums depend on the keys (in order) alone: a report read again (a sequence's
            # next snapshot, decoded anew) with the same bundles sums to the same figures
            keys = tuple(bundles)
            avg = self._avg_keys.get(keys)
            out.append(avg)
            if avg is None:
                todo.append((g, bundles, keys))
            else:
                self._avg[id(bundles)] = (bundles, avg)
        if todo:
            index = self._index
            shape = tuple(k for _, _, k in todo)
            last = _GATHER[0] if _GATHER else None
            if last is not None and last[0] is index and last[1] == shape:
                mat = last[2]  # the same keys at the same positions: the same gather
            else:
                if any(k not in index for _, b, _ in todo for k in b):
                    return None
                width = max(len(b) for _, b, _ in todo)
                total = len(self._keys)
                mat = np.full((len(todo), width), total, dtype=np.intp)
                for r, (_, b, _) in enumerate(todo):
                    if b:
                        mat[r, :len(b)] = np.fromiter(map(index.__getitem__, b), np.intp, len(b))
                _GATHER[:] = [(index, shape, mat)]
            width = mat.shape[1]
            ext = np.concatenate((self.vals, np.zeros((8, 1), np.float64)), axis=1)
            gathered = ext[:, mat]  # (8, groups, width)
            if width:
                # left to right, as the Python loop adds: accumulate is sequential (never
                # pairwise); the loop starts from +0.0, which only changes an all -0.0 sum
                acc = np.add.accumulate(gathered, axis=2)[:, :, -1] + 0.0
            else:
                acc = np.zeros((8, len(todo)), np.float64)
            sums = acc.T.tolist()
            for r, (g, b, keys) in enumerate(todo):
                avg = TimeAverageBrokerData(*sums[r])
                out[g] = avg
                self._avg[id(b)] = (b, avg)
                self._avg_keys[keys] = avg
        return out  # type: ignore[return-value]  # every slot filled above


def columns_of(np: Any, data: Mapping[str, BundleData] | BundleColumns) -> BundleColumns:
    return data if isinstance(data, BundleColumns) else BundleColumns.of(np, data)

