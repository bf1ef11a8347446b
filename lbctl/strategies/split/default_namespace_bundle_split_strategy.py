"""``extensions.strategy.DefaultNamespaceBundleSplitStrategyImpl``: which hot bundles to split.

Every broker runs it over its own bundles each ``loadBalancerSplitIntervalMinutes``: a bundle with
at least 2 topics that exceeds a limit — topics (``loadBalancerNamespaceBundleMaxTopics``), else
sessions (``…MaxSessions``, when > 0), else message rate (``…MaxMsgRate``), else throughput
(``…MaxBandwidthMbytes`` MiB/s) — raises its hit count; a bundle below every limit loses it. It
splits once the count exceeds ``loadBalancerNamespaceBundleSplitConditionHitCountThreshold``,
unless its namespace already has ``loadBalancerNamespaceMaximumBundles`` (counting this cycle's
splits) or a bundle of the namespace sharing its lower or upper bound is mid-split; at most
``loadBalancerMaxNumberOfBundlesToSplitPerCycle`` per cycle (later bundles are not evaluated, so
their counts do not advance). The children stay on the broker.

The hit counts are the strategy's memory across cycles. The boundary comes from the broker's
``defaultNamespaceBundleSplitAlgorithm`` (``NamespaceService.getSplitBoundary(bundle, null,
algorithm)``), computed by the caller's ``boundaries(bundle)``: every algorithm works, with
Pulsar's rules around it — an algorithm that fails (``specified_positions_divide`` without
positions, ``flow_or_qps_equally_divide`` when it is not the default), answers no boundary
(``null``) or more than one (``flow_or_qps_equally_divide`` cutting a bundle in three or more;
"The size of split boundaries is not 1") is a Failure/Unknown decision, and the bundle keeps its
hit count. Without ``boundaries`` only ``range_equally_divide`` (it reads no topic) is computed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Literal

from msgspec import Struct

from lbctl.config import Settings
from lbctl.model.bundle import BundleRange, bundle_name
from lbctl.model.decision import (
    BundleCheck,
    Label,
    Reason,
    SplitDecision,
    SplitFigures,
    SplitResult,
    Why,
)
from lbctl.model.javaint import int_add, int_mul
from lbctl.model.javaorder import concurrent_order, java_string_hash, spread
from lbctl.model.load import NamespaceBundleStats
from lbctl.records import replace
from lbctl.strategies.split.base import SplitBoundaries, SplitError

MIB = 1024 * 1024


#: What the split strategy concluded about one bundle.
Check = Literal[
    "few-topics",
    "not-owner",  # broker
    "invalid-range",  # detail: the range (Failure/Unknown)
    "waiting",  # hits, threshold; reason (over a limit) or none (under every limit)
    "count-failed",  # detail: the error (Failure/Unknown)
    "namespace-full",  # namespace, count, maximum
    "parent-splitting",  # detail: the bundle being split
    "needs-topics",  # algorithm (Failure/Unknown)
    "algorithm-failed",  # algorithm, detail: the error (Failure/Unknown)
    "not-one-boundary",  # algorithm, boundaries; inner: the algorithm's why
    "split",  # reason, hits, threshold
]


class CheckWhy(Why, frozen=True):
    """A reason of :data:`Check`, with its figures."""

    code: Check
    broker: str = ""
    detail: str = ""
    hits: int = 0
    threshold: int = 0
    reason: Reason | None = None
    namespace: str = ""
    count: int = 0
    maximum: int = 0
    algorithm: str = ""
    boundaries: tuple[int, ...] = ()
    inner: Why | None = None
    figures: SplitFigures | None = None  # waiting (over a limit) and split: what fired


_FEW_TOPICS = CheckWhy("few-topics")


def _range_of(bundle: str) -> tuple[str, str]:
    ns, _, rng = bundle.rpartition("/")
    return ns, rng


def _parse_range(rng: str) -> BundleRange | None:
    try:
        lo, hi = rng.split("_")
        return BundleRange(int(lo, 16), int(hi, 16))
    except ValueError:
        return None


def split_figures(st: NamespaceBundleStats, settings: Settings) -> SplitFigures | None:
    """The first limit exceeded — Topics, then Sessions, then MsgRate, then Bandwidth — with the
    limit and the bundle's figures. In Java ``int`` arithmetic (:mod:`lbctl.model.javaint`): the
    session count is an ``int`` sum and the bandwidth limit ``MaxBandwidthMbytes * MIBI`` an
    ``int`` product widened to ``long`` (2048 MB wraps to -2^31: every bundle splits for
    Bandwidth, and the limit reads -2048 MB/s, as Pulsar's log divides it by ``MIBI``)."""
    max_topics = int(settings["loadBalancerNamespaceBundleMaxTopics"])
    max_sessions = int(settings["loadBalancerNamespaceBundleMaxSessions"])
    max_rate = int(settings["loadBalancerNamespaceBundleMaxMsgRate"])
    max_bw = int_mul(int(settings["loadBalancerNamespaceBundleMaxBandwidthMbytes"]), MIB)
    rate = st.msgRateIn + st.msgRateOut
    tp = st.msgThroughputIn + st.msgThroughputOut
    if st.topics > max_topics:
        reason, limit = Reason.TOPICS, max_topics
    elif max_sessions > 0 and int_add(st.consumerCount, st.producerCount) > max_sessions:
        reason, limit = Reason.SESSIONS, max_sessions
    elif rate > max_rate:
        reason, limit = Reason.MSG_RATE, max_rate
    elif tp > max_bw:
        reason, limit = Reason.BANDWIDTH, max_bw // MIB  # exact: a multiple of 2^20 stays one
    else:
        return None
    return SplitFigures(reason, limit, st.topics, st.producerCount, st.consumerCount, rate, tp)


def bundle_stats_walk(stats: Mapping[str, NamespaceBundleStats], *, iterated: bool
                      ) -> list[tuple[str, NamespaceBundleStats]]:
    """The order ``findBundlesToSplit`` walks the broker's bundle stats, given them as a snapshot
    holds them. It walks ``BrokerService.getBundleStats()``: ``PulsarStats.bundleStats``, a
    ``ConcurrentHashMap`` that ``updateStats`` ``clear()`` s (keeping its table) and refills with
    ``computeIfAbsent`` in the topics map's order (PulsarStats at 1710bfdaa85f). Which order the
    snapshot's mapping is in depends on where it came from:

    * ``iterated``: a load report (``LocalBrokerData``, the modular and simple load managers'
      reports, which lbctl reads for an extensible cycle as derived data). ``LocalBrokerData.
      update`` keeps that very map as ``lastStats`` and the report is its JSON, written by
      iterating it: the mapping's order *is* the map's iteration order, the kept table included,
      and the walk takes it as it is. Putting it again into a fresh map, as if it were the order
      the bundles were put, reorders it (bucket order of a smaller table, chains split by
      ``transfer``): 147 of 300 JDK-filled maps of 2 to 200 bundles, a third of them
      refilled after a larger fill (tests/strategies/split/test_split_walk_order_jdk.py).
    * not ``iterated``: bundle stats rebuilt from the broker's topic stats (the live extensible
      capture sums ``/broker-stats/topics``, which ``updateStats`` writes in the same walk that
      puts the bundles): the order they were put, so the walk is a fresh map's order filled in
      it (the table the map kept from larger fills cannot be known).

    A report's order is taken as it is only when it can be a ``ConcurrentHashMap``'s iteration
    order — its bundles' bucket indexes never decrease for some table length
    (:func:`hash_table_order`). Reports lbctl itself edited (a plan applied, a simulated split
    adding children at the end) are not, and are put into a fresh map as rebuilt stats are."""
    if iterated and hash_table_order(stats) is not None:
        return list(stats.items())
    return [(b, stats[b]) for b in concurrent_order(stats)]


def hash_table_order(keys: Iterable[str]) -> int | None:
    """The smallest table length (a power of two from 16 to 2^30) for which ``keys`` come in
    bucket order — the order a ``HashMap`` or ``ConcurrentHashMap`` of that table iterates them
    in, whatever order they were put — or ``None`` when no table does. A wrong table length is
    usually refuted within the first few keys."""
    hashes = [spread(java_string_hash(k)) for k in keys]
    n = 16
    while n <= 1 << 30:
        mask = n - 1
        last = 0
        for h in hashes:
            b = h & mask
            if b < last:
                break
            last = b
        else:
            return n
        n <<= 1
    return None


class _Broker(Struct, frozen=True):
    """One broker's run: who it is, what it reads, and the lookups it is given."""

    broker: str
    settings: Settings
    bundle_count: Callable[[str], int]
    is_owner: Callable[[str], bool]
    splitting: Mapping[str, str]
    boundaries: Callable[[str], SplitBoundaries] | None
    threshold: int
    max_bundles: int
    algorithm: str


def find_bundles_to_split(
    broker: str,
    bundle_stats: Iterable[tuple[str, NamespaceBundleStats]],
    settings: Settings,
    hit_counts: Mapping[str, int],
    bundle_count: Callable[[str], int],
    is_owner: Callable[[str], bool] = lambda bundle: True,
    splitting: Mapping[str, str] | None = None,
    boundaries: Callable[[str], SplitBoundaries] | None = None,
) -> SplitResult:
    """``DefaultNamespaceBundleSplitStrategyImpl.findBundlesToSplit`` for one broker: each bundle
    of 2 topics or more that it owns and whose range can split updates its hit count; one over
    the threshold splits unless its namespace is full or a neighbour is mid-split, at most
    ``loadBalancerMaxNumberOfBundlesToSplitPerCycle`` per cycle. ``bundle_count(namespace)``
    may raise (Failure); ``boundaries(bundle)`` is the default algorithm's answer (it may raise
    :class:`~lbctl.strategies.split.base.SplitError`: Failure)."""
    stats = list(bundle_stats)
    counts = {b: n for b, n in hit_counts.items() if b in dict(stats)}
    run = _Broker(broker, settings, bundle_count, is_owner, splitting or {}, boundaries,
                  int(settings["loadBalancerNamespaceBundleSplitConditionHitCountThreshold"]),
                  int(settings["loadBalancerNamespaceMaximumBundles"]),
                  str(settings["defaultNamespaceBundleSplitAlgorithm"]))
    max_splits = int(settings["loadBalancerMaxNumberOfBundlesToSplitPerCycle"])
    decisions: list[SplitDecision] = []
    checks: list[BundleCheck] = []
    per_ns: dict[str, int] = {}
    failures = 0
    for bundle, st in stats:
        got = _check(run, bundle, st, counts, per_ns)
        checks.append(got.check)
        failures += got.failed
        if got.decision is not None:
            decisions.append(got.decision)
            ns = _range_of(bundle)[0]
            per_ns[ns] = per_ns.get(ns, 0) + 1
            counts.pop(bundle, None)
            if len(decisions) == max_splits:
                break
    return SplitResult(tuple(decisions), failures, dict(counts), tuple(checks))


class _Checked(Struct, frozen=True):
    check: BundleCheck
    failed: bool = False  # a Failure/Unknown counter update
    decision: SplitDecision | None = None


def _check(run: _Broker, bundle: str, st: NamespaceBundleStats, counts: dict[str, int],
           per_ns: Mapping[str, int]) -> _Checked:
    """One bundle of the loop: eligibility, the hit count (updated in ``counts``), the
    namespace's bundle count, a splitting neighbour, then the boundary."""
    if st.topics < 2:
        return _Checked(BundleCheck(bundle, counts.get(bundle, 0), _FEW_TOPICS))
    if not run.is_owner(bundle):
        return _Checked(BundleCheck(bundle, counts.get(bundle, 0),
                                    CheckWhy("not-owner", run.broker)))
    ns, rng = _range_of(bundle)
    parsed = _parse_range(rng)
    if parsed is None or not parsed.can_split():
        return _Checked(BundleCheck(bundle, counts.get(bundle, 0),
                                    CheckWhy("invalid-range", detail=rng)), failed=True)
    figures = split_figures(st, run.settings)
    reason = None if figures is None else figures.reason
    if reason is not None:
        counts[bundle] = counts.get(bundle, 0) + 1
    else:
        counts.pop(bundle, None)
    hits = counts.get(bundle, 0)
    if hits <= run.threshold:
        return _Checked(BundleCheck(bundle, hits, CheckWhy(
            "waiting", hits=hits, threshold=run.threshold, reason=reason, figures=figures)))
    try:
        count = run.bundle_count(ns)
    except Exception as e:
        return _Checked(BundleCheck(bundle, hits, CheckWhy("count-failed", detail=str(e))),
                        failed=True)
    if count + per_ns.get(ns, 0) >= run.max_bundles:
        return _Checked(BundleCheck(bundle, hits, CheckWhy(
            "namespace-full", namespace=ns, count=count, maximum=run.max_bundles)))
    lo, hi = rng.split("_")
    parent_splitting = next(
        (b for b, r in run.splitting.items()
         if b.startswith(ns) and (r.startswith(lo) or r.endswith(hi))), None)
    if parent_splitting is not None:
        return _Checked(BundleCheck(bundle, hits, CheckWhy("parent-splitting",
                                                           detail=parent_splitting)))
    boundary = _boundary(run, bundle, parsed)
    if not isinstance(boundary, int):
        return _Checked(BundleCheck(bundle, hits, _with(boundary, hits=hits)), failed=True)
    children = (bundle_name(ns, parsed.lower, boundary), bundle_name(ns, boundary, parsed.upper))
    return _Checked(
        BundleCheck(bundle, hits, CheckWhy("split", hits=hits, threshold=run.threshold,
                                           reason=reason, figures=figures)),
        decision=SplitDecision(bundle, run.broker, Label.SUCCESS, reason or Reason.UNKNOWN,
                               boundary, children, run.algorithm, figures))


def _boundary(run: _Broker, bundle: str, parsed: BundleRange) -> int | CheckWhy:
    """``getSplitBoundary`` with the default algorithm: its one boundary, or why there is none
    (a Failure/Unknown)."""
    algorithm = run.algorithm
    if run.boundaries is None:
        if algorithm == "range_equally_divide":
            return parsed.lower + (parsed.upper - parsed.lower) // 2
        return CheckWhy("needs-topics", algorithm=algorithm)
    try:
        answer = run.boundaries(bundle)
    except SplitError as e:
        return CheckWhy("algorithm-failed", algorithm=algorithm, detail=str(e))
    if answer.boundaries is None or len(answer.boundaries) != 1:
        return CheckWhy("not-one-boundary", algorithm=algorithm,
                        boundaries=answer.boundaries or (), inner=answer.why)
    return answer.boundaries[0]


def _with(why: CheckWhy, **changes: object) -> CheckWhy:
    return replace(why, **changes)
