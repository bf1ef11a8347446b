"""``lbctl/plan@1``, declared once: what :mod:`lbctl.plan` writes and :mod:`lbctl.apply.planfile`
reads (``docs/plan-format.md``).

A plan is a header (cluster, capture time, load manager, strategies, the settings read), its
actions, a row per broker and a summary; the keys after ``summary`` (``decision``, ``history``,
``pulsarVersion``, ``warnings``) were added to plan@1 later and are optional for a reader. An
action is an ``unload`` or a ``transfer`` (a bundle moved, to a destination the load manager
chose or to the next lookup's choice) or a ``split`` (boundaries inside the bundle's range, and
whether its children are unloaded) — one record per kind, told apart by ``action``.

:class:`PlanHeader` is what carrying a plan out needs (``lbctl apply`` reads only it: the rows
and the summary are for people); :class:`PlanDocument` is the whole, the header's fields first.
"""


import sys
from typing import Annotated, Any, Final, Literal

from msgspec import UNSET, Meta, Struct, UnsetType

PLAN_FORMAT: Final = "lbctl/plan@1"
KINDS = ("unload", "transfer", "split")


def _words(**extra: Any) -> Meta:
    return Meta(extra=extra)


Figure = Annotated[Annotated[float, Meta(ge=-sys.float_info.max, le=sys.float_info.max)] | None,
                   _words(expected="a finite number or null")]
Text = Annotated[str, _words(expected="a string")]
NonEmpty = Annotated[str, Meta(min_length=1, extra={"expected": "a non-empty string"})]


Skipped = Annotated[str | None, _words(expected="a string or absent")] | UnsetType
#: a broker id (``host:port``, the lookup service address Pulsar names a broker by) holds no
#: blank, control, invisible or bidirectional character: a plan naming one (a hand-edited file, a
#: snapshot with a hostile name) printed it raw in apply's lines — a newline in it started a line
#: of its own (hostile20) — and no broker of a real cluster has such an id
_ID_CHARS = "[^\\s\x00-\x1f\x7f-\x9f\u00ad\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]"
_BROKER_ID = "a broker id (host:port: no blank, control or invisible character)"


def _broker_id_words(value: object) -> str:
    return "expected a non-empty string" if value == "" else f"expected {_BROKER_ID}"


BrokerId = Annotated[str, Meta(min_length=1, pattern=f"^{_ID_CHARS}+$",
                               extra={"explain": _broker_id_words})]


class _Action(Struct, frozen=True, kw_only=True, tag_field="action"):
    bundle: NonEmpty
    broker: Annotated[str, Meta(pattern=f"^{_ID_CHARS}*$", extra={
        "expected": f"{_BROKER_ID}, or empty"})] = ""  # the owner; a split may leave it empty


class MoveAction(_Action, frozen=True, kw_only=True):
    """An ``unload`` (or ``transfer``) of ``bundle`` from ``broker``; ``destinationBroker`` is
    ``null`` when the next lookup chooses."""

    broker: BrokerId
    destinationBroker: Annotated[BrokerId | None, _words(expected="a broker id or null")] = None
    reason: Text = ""
    msgRate: Figure = None
    throughput: Figure = None
    skipped: Skipped = UNSET


class UnloadAction(MoveAction, frozen=True, kw_only=True, tag="unload"):
    pass


class TransferAction(MoveAction, frozen=True, kw_only=True, tag="transfer"):
    pass


class SplitAction(_Action, frozen=True, kw_only=True, tag="split"):
    """A ``split`` of ``bundle`` at ``boundaries`` (``0x%08x``, ascending); ``children`` are the
    new bundles' full names, unloaded after the split when ``unload``; ``detail`` is the figure
    that fired ``reason``."""

    reason: Text = ""
    detail: Annotated[str | None, _words(expected="a string or null")] = None
    algorithm: Annotated[str | None, _words(expected="a string or null")] = None
    boundaries: Annotated[list[Annotated[str, _words(expected='a position like "0x40000000"')]],
                          _words(expected='a non-empty list of "0x%08x" positions')] = []
    children: list[str] = []
    unload: Annotated[bool, _words(expected="true or false")] = False
    msgRate: Figure = None
    throughput: Figure = None
    skipped: Skipped = UNSET


Action = Annotated[UnloadAction | TransferAction | SplitAction, _words(expected="an object")]


class Spread(Struct, frozen=True):
    mean: float
    std: float
    max: float
    min: float


class Summary(Struct, frozen=True):
    """Counts, and the usage spread before and after (brokers without a finite figure left
    out)."""

    brokers: int
    bundles: int
    unloads: int
    splits: int
    skipped: int
    before: Spread
    after: Spread


class BrokerRow(Struct, frozen=True, kw_only=True):
    """One broker's row: its usage (a fraction), score, rates, bundle count; with
    ``explained`` plans, the usage after, the resources, why and the numbers."""

    broker: str
    usage: float | None
    score: float | None
    msgRate: float | None
    throughput: float | None
    bundles: int
    label: str | UnsetType = UNSET
    reason: str | UnsetType = UNSET
    usageAfter: float | None | UnsetType = UNSET
    resources: dict[str, float | None] | UnsetType = UNSET
    why: str | UnsetType = UNSET
    numbers: dict[str, float | None] | UnsetType = UNSET


class PlanWarning(Struct, frozen=True):
    """One sanity warning: a stable code for scripts and one line for people."""

    code: str  # destination-shed | over-threshold | concentrated | split-and-unload | note | …
    message: str
    brokers: tuple[str, ...] = ()
    bundles: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "brokers": list(self.brokers),
                "bundles": list(self.bundles)}


class PlanHeader(Struct, frozen=True, kw_only=True):
    """What carrying a plan out needs: the header and the actions."""

    format: Literal["lbctl/plan@1"]
    cluster: NonEmpty
    capturedAt: Annotated[str, _words(expected="an RFC 3339 time")]
    loadManager: Annotated[str | None, _words(expected="a string")] = "modular"
    shedding: Annotated[str | None, _words(expected="a string")] = ""
    placement: Annotated[str | None, _words(expected="a string")] = ""
    settings: dict[str, Any] = {}
    actions: Annotated[list[Action], _words(expected="a list")] = []


class PlanDocument(PlanHeader, frozen=True, kw_only=True):
    """A whole plan@1 document, as lbctl writes it."""

    brokers: list[BrokerRow] = []
    summary: Summary | UnsetType = UNSET
    decision: dict[str, Any] | UnsetType = UNSET  # the cycle's outcome in one line
    history: dict[str, Any] | UnsetType = UNSET  # how the leader's clock moved before it
    pulsarVersion: dict[str, Any] | UnsetType = UNSET
    warnings: list[PlanWarning] | UnsetType = UNSET
