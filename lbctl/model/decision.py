"""What load managers decide, as data: one vocabulary for every strategy, plan and explanation.

Mirrors Pulsar's decision objects (``extensions.models.UnloadDecision`` and ``SplitDecision``): a
label, a reason and the numbers, for every broker and bundle looked at, including those where
nothing happens. The modular strategies return the same vocabulary, so a plan or an explanation
never asks which load manager produced a decision.

    Label:  Success | Skip | Failure
    Reason: Overloaded | Underloaded | Balanced | NoBundles | HitCount | CoolDown | OutDatedData
            | NoLoadData | NoBrokers | Unknown | Disabled (shedding)
            Topics | Sessions | MsgRate | Bandwidth | Admin (split)

Records, by who makes them::

    shedding strategies      SheddingDecision ─┬─ Selection       a bundle picked to unload
                                               ├─ BrokerVerdict   per broker: label, reason, numbers
                                               └─ BundleCandidate per bundle looked at
    TransferShedder          ShedResult ─┬─ UnloadDecision(Unload)  per decided unload/transfer
                                         ├─ BrokerStat           per broker, as phase A saw it
                                         └─ Round ── BundleStep  per max/min pairing
    placement strategies     PlacementDecision                  scores and the pick
    modular selectBroker     PlacementTrace ── FilterStep       the filters, then the strategy
    modular cycle            UnloadOutcome                      a selection and what became of it
    split strategies         SplitCandidate / AutoSplit (modular), SplitResult ─┬─ SplitDecision
                                                                                └─ BundleCheck

All records are immutable, and none holds a sentence: a reason is a :class:`Why` record (a code
naming the situation and the figures behind it), which :mod:`lbctl.explain.words` turns into the
words ``explain``, plans and tables print.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal

from msgspec import Struct, field

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Why(Struct, frozen=True):
    """A reason as data: the base of every strategy's reason record.

    A deciding module (a strategy, a filter, the load manager) subclasses it with a ``code`` (one
    of a ``Literal`` of its situations' names: checked by mypy wherever a record is built or a
    code matched, and free at import, where an ``Enum`` class per strategy cost milliseconds of
    every command's start-up) and the figures that situation's sentence needs, as they were when
    the decision was made. Words are made only when something is shown
    (:func:`lbctl.explain.words.words`), so a cycle formats nothing.
    """


class Label(StrEnum):
    """``UnloadDecision.Label`` / ``SplitDecision.Label``."""

    SUCCESS = "Success"
    SKIP = "Skip"
    FAILURE = "Failure"


class Reason(StrEnum):
    """``UnloadDecision.Reason`` and ``SplitDecision.Reason``, plus ``Balanced`` (the modular
    strategies' "nothing to do"; the extensible shedder reports a balanced cluster as
    Skip/HitCount)."""

    OVERLOADED = "Overloaded"
    UNDERLOADED = "Underloaded"
    BALANCED = "Balanced"
    NO_BUNDLES = "NoBundles"
    HIT_COUNT = "HitCount"
    COOL_DOWN = "CoolDown"
    OUTDATED_DATA = "OutDatedData"
    NO_LOAD_DATA = "NoLoadData"
    NO_BROKERS = "NoBrokers"
    UNKNOWN = "Unknown"
    DISABLED = "Disabled"  # lbctl's: loadBalancerEnabled / loadBalancerSheddingEnabled is false
    TOPICS = "Topics"
    SESSIONS = "Sessions"
    MSG_RATE = "MsgRate"
    BANDWIDTH = "Bandwidth"
    ADMIN = "Admin"


class CycleDecision(Struct, frozen=True):
    """What one cycle came to, in one line: ``Success/Overloaded`` when something moves, else the
    gate that held (``Skip/HitCount``, ``Skip/CoolDown``, ``Skip/NoBrokers``, ``Skip/Balanced``…)
    and why. ``plan@1`` carries it as its top-level ``decision``."""

    label: Label
    reason: Reason
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"label": str(self.label), "reason": str(self.reason), "detail": self.detail}


# --- shedding (modular strategies) ----------------------------------------------------------------
class Selection(Struct, frozen=True):
    """One bundle a shedder picked to unload from ``broker``."""

    broker: str
    bundle: str
    reason: Reason
    msg_rate: float
    throughput: float
    destination: str | None = None  # AvgShedder/TransferShedder choose it while shedding


class BundleCandidate(Struct, frozen=True):
    """One bundle the selection loop looked at, and what it did with it and why."""

    broker: str
    bundle: str
    value: float  # the figure it was ranked by (throughput or rate)
    chosen: bool
    why: Why


class BrokerVerdict(Struct, frozen=True):
    """What a strategy concluded about one broker, with the numbers behind it."""

    broker: str
    usage: float | None = None  # the strategy's load figure (fraction)
    score: float | None = None  # history-smoothed figure, where the strategy keeps one
    label: Label | None = None
    reason: Reason | None = None
    why: Why | None = None
    numbers: Mapping[str, float] = field(default_factory=lambda: _EMPTY)


#: a cluster-level note: a strategy's reason, or a line already in words from a component that is
#: no strategy (lbctl's own planner states its solver's status)
Note = Why | str


class SheddingDecision(Struct, frozen=True):
    """The outcome of one ``findBundlesForUnloading`` call."""

    strategy: str
    selections: tuple[Selection, ...] = ()
    brokers: Mapping[str, BrokerVerdict] = field(default_factory=lambda: _EMPTY)
    candidates: tuple[BundleCandidate, ...] = ()
    notes: tuple[Note, ...] = ()  # cluster-level reasoning
    numbers: Mapping[str, float] = field(default_factory=lambda: _EMPTY)
    #: the exception the strategy threw ("" when it returned): Pulsar's ``LoadSheddingTask``
    #: catches it and the cycle unloads nothing (AvgShedder's broker sort before PR #24954)
    failure: str = ""


# --- shedding (TransferShedder) -----------------------------------------------------------------
class Unload(Struct, frozen=True):
    """``models.Unload``: move ``bundle`` off ``source``, to ``destination`` (transfer) or to
    whichever broker the next lookup picks (``None``)."""

    source: str
    bundle: str
    destination: str | None = None


class UnloadDecision(Struct, frozen=True):
    """``models.UnloadDecision``: an unload with its label and reason (value equality)."""

    unload: Unload
    label: Label
    reason: Reason


def unloads_key(decisions: Sequence[UnloadDecision]) -> set[tuple[str, str, str | None, str, str]]:
    """Decisions as a set of plain tuples (Pulsar returns a ``Set``)."""
    return {(d.unload.source, d.unload.bundle, d.unload.destination, str(d.label), str(d.reason))
            for d in decisions}


#: What a TransferShedder round did with one top bundle.
StepOutcome = Literal[
    "moved",
    "skipped",
    "stopped",
]


class BundleStep(Struct, frozen=True):
    """One top bundle of a max broker, and what the round did with it."""

    bundle: str
    throughput: float
    outcome: StepOutcome
    why: Why
    swaps: tuple[Unload, ...] = ()


#: How a TransferShedder round ended.
RoundOutcome = Literal[
    "offloaded",
    "no load data",
    "few bundles",
    "nothing movable",
]


class Round(Struct, frozen=True):
    """One max/min pairing of TransferShedder's main loop, with the numbers it used."""

    reason: Reason
    why_reason: Why
    max_broker: str
    min_broker: str
    std_before: float
    std_after: float
    outcome: RoundOutcome
    why: Why
    max_load: float | None = None
    min_load: float | None = None
    offload: float | None = None
    offload_throughput: float | None = None
    max_throughput: float | None = None
    min_throughput: float | None = None
    marked: float = 0.0
    gained: float = 0.0
    adjusted_offload: float | None = None
    bundles: tuple[BundleStep, ...] = ()


class BrokerStat(Struct, frozen=True):
    """A broker of the load-data store as TransferShedder's phase A saw it."""

    broker: str
    load: float
    counted: bool
    why: Why | None = None


class ShedResult(Struct, frozen=True):
    """Everything one TransferShedder ``findBundlesForUnloading`` decided, and why."""

    decisions: tuple[UnloadDecision, ...]
    skip: tuple[Label, Reason] | None  # the counter update when nothing was decided
    why: Why  # the outcome and its gate
    hit_count_before: int
    hit_count: int  # the memory carried to the next cycle
    threshold: int
    avg: float  # counter.getLoadAvg() (0 when phase A stopped the cycle)
    std: float  # counter.getLoadStd()
    final_std: float  # LoadStats.std after the loop
    brokers: tuple[BrokerStat, ...] = ()
    sorted_brokers: tuple[str, ...] = ()
    condition: Mapping[str, bool] = field(default_factory=dict)
    rounds: tuple[Round, ...] = ()
    stop: Why | None = None  # why the main loop ended
    expired_brokers: tuple[str, ...] = ()  # removed from recentlyUnloadedBrokers
    hit_count_at_gate: int = 0  # the count the gate compared with the threshold


# --- placement ------------------------------------------------------------------------------------
class PlacementDecision(Struct, frozen=True):
    """Which broker a placement strategy picked for a bundle, and the scores it compared.

    ``no_data`` and ``average`` are the extensible ``LeastResourceUsageWithWeight``'s: candidates
    without load data, and the average load of the others.
    """

    strategy: str
    bundle: str
    broker: str | None
    candidates: Sequence[str]  # a tuple, or an Excluding view (model/candidates.py)
    scores: Mapping[str, float] = field(default_factory=lambda: _EMPTY)
    best: tuple[str, ...] = ()
    why: Why | None = None
    no_data: tuple[str, ...] = ()
    average: float | None = None


class FilterStep(Struct, frozen=True):
    """One broker filter of ``selectBroker``: who went in, who came out, and why."""

    name: str
    before: Sequence[str]  # a tuple, or an Excluding view (model/candidates.py)
    after: Sequence[str]
    why: Why | None = None


class PlacementTrace(Struct, frozen=True):
    """How ``selectBroker`` chose (or failed to choose) a destination."""

    bundle: str
    steps: tuple[FilterStep, ...]
    decision: PlacementDecision | None
    recheck: PlacementDecision | None = None  # the overload post-check's second pick
    broker: str | None = None
    why: Why | None = None


class UnloadOutcome(Struct, frozen=True):
    """A bundle the shedder selected, and what the load manager then did with it."""

    selection: Selection
    destination: str | None
    skipped: Why | None = None  # why it is not unloaded (None: it is)
    placement: PlacementTrace | None = None


# --- splits ---------------------------------------------------------------------------------------
class SplitCandidate(Struct, frozen=True):
    """A bundle over a split threshold (modular ``BundleSplitterTask``); ``selected`` unless its
    namespace has too many bundles. ``limit`` is the limit ``reason`` exceeded (its figure is
    ``topics``, ``producers + consumers``, ``msg_rate`` or ``throughput``, in MB/s for the
    bandwidth limit)."""

    bundle: str
    broker: str
    reason: Reason
    limit: int
    topics: int
    producers: int
    consumers: int
    msg_rate: float  # long-term msgRateIn + msgRateOut
    throughput: float  # long-term msgThroughputIn + msgThroughputOut, bytes/s
    selected: bool = True
    why: Why | None = None  # why not selected


class AutoSplit(Struct, frozen=True):
    """What the modular ``checkNamespaceBundleSplit`` does with one picked bundle."""

    candidate: SplitCandidate
    algorithm: str
    boundaries: tuple[int, ...] = ()
    children: tuple[str, ...] = ()
    unload: bool = False
    skipped: Why | None = None
    why: Why | None = None  # the algorithm's


class SplitFigures(Struct, frozen=True):
    """The extensible split strategy's figures for a bundle over a limit: the first limit exceeded
    (``reason``) and that limit (in MB/s for the bandwidth limit, as
    ``DefaultNamespaceBundleSplitStrategyImpl`` logs ``maxBundleBandwidth / MIBI``), with the
    bundle's counts and rates (``msg_rate`` is ``msgRateIn + msgRateOut``, ``throughput`` bytes/s)
    — the same names as :class:`SplitCandidate`, so both are worded alike."""

    reason: Reason
    limit: int
    topics: int
    producers: int
    consumers: int
    msg_rate: float
    throughput: float


class SplitDecision(Struct, frozen=True):
    """The extensible ``SplitDecision`` with its ``Split``: the parent bundle, the broker, the two
    child ranges; ``figures``: the condition that fired (Pulsar logs it, the decision keeps it so
    ``recommend`` and ``explain`` can say which setting, figure and limit)."""

    bundle: str
    broker: str
    label: Label
    reason: Reason
    boundary: int | None = None
    children: tuple[str, ...] = ()
    algorithm: str = "range_equally_divide"
    figures: SplitFigures | None = None


class BundleCheck(Struct, frozen=True):
    """One bundle the extensible split strategy looked at, for ``explain``."""

    bundle: str
    hit_count: int
    why: Why


class SplitResult(Struct, frozen=True):
    """One broker's run of the extensible split strategy."""

    decisions: tuple[SplitDecision, ...]
    failures: int  # Failure/Unknown counter updates
    hit_counts: Mapping[str, int]
    checks: tuple[BundleCheck, ...] = ()


# --- the load managers' own reasons ---------------------------------------------------------------
#: What the modular load manager itself decides around its strategies.
Cycle = Literal[
    # doLoadShedding: a selected bundle that is not unloaded (UnloadOutcome.skipped)
    "excluded-namespace",  # namespace
    "owner-only",  # shouldNamespacePoliciesUnload
    "would-come-back",  # shouldAntiAffinityNamespaceUnload
    "no-broker",
    "same-broker",
    # selectBroker (PlacementTrace.why)
    "strategy-found-none",
    "overloaded-pick",  # broker (the overloaded pick), usage, threshold; detail: the next pick
    # the load manager's own filter steps (FilterStep.why)
    "restored",
    "no-report",  # names
    # checkNamespaceBundleSplit (AutoSplit.skipped)
    "bad-name",  # detail: the parser's message
    "cannot-split",  # detail: the range
    "not-a-bundle",  # detail: the bundle
    "no-boundary",  # detail: the algorithm; inner: its reason
    "split-refused",  # detail: the split error's message
]


class CycleWhy(Why, frozen=True):
    """A reason of :data:`Cycle`, with its figures."""

    code: Cycle
    detail: str = ""
    broker: str = ""
    usage: float = 0.0
    threshold: float = 0.0
    names: tuple[str, ...] = ()
    inner: Why | None = None


#: How ``split-bundle``'s preview chose its bundle and its algorithm (the broker side of
#: ``pulsar-admin namespaces split-bundle``).
AdminSplit = Literal[
    "largest",  # count (of the namespace's persistent topics), total
    "hot",  # namespace, throughput (long-term, bytes/s)
    "asked",  # the algorithm asked for (-san)
    "asked-unknown",  # asked, used: the broker's default
    "default",  # defaultNamespaceBundleSplitAlgorithm
    "default-unknown",  # default (configured), used
]


class AdminSplitWhy(Why, frozen=True):
    """A reason of :data:`AdminSplit`, with its figures."""

    code: AdminSplit
    count: int = 0
    total: int = 0
    namespace: str = ""
    throughput: float = 0.0
    asked: str = ""
    used: str = ""
    default: str = ""
