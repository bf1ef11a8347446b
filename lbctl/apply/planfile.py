"""Reading a plan@1 file for ``lbctl apply``: any valid plan — ``recommend -o json``, ``propose``,
``rebalance-after``, a rollback plan, or one written by hand.

The document is decoded into the format's own records (:class:`lbctl.model.wire.plan.PlanHeader`,
what :mod:`lbctl.plan` writes): only what carrying out a plan needs is required (the header's
``format``, ``cluster`` and ``capturedAt``, and each action's ``action``, ``bundle``, ``broker``,
and for a split its ``boundaries``); the per-broker rows and the summary are for people and are
not read. Then what a type cannot say: a bundle name Pulsar accepts, a destination other than the
owner, split positions inside the bundle, ascending, rates and throughputs >= 0, each bundle acted
on once. Errors name the file and the action
(``plan.json: actions[3].bundle: …``), one line, exit 1.
"""

from __future__ import annotations

import hashlib
import math
import shlex
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec
from msgspec import UNSET

from lbctl.errors import PlanError, SnapshotError
from lbctl.model.bundle import BundleName, BundleNameError, format_position, parse_position
from lbctl.model.wire import plan as wire
from lbctl.model.wire.plan import KINDS as KINDS
from lbctl.model.wire.plan import PLAN_FORMAT as PLAN_FORMAT
from lbctl.model.wire.problems import first_problem


@dataclass(frozen=True)
class PlannedAction:
    """One action of a plan file, checked."""

    step: int  # 1-based position in the plan's action list
    action: str
    bundle: str
    broker: str
    reason: str = ""
    destination: str | None = None
    msg_rate: float | None = None
    throughput: float | None = None  # bytes/s
    skipped: str | None = None
    algorithm: str | None = None
    boundaries: tuple[int, ...] = ()
    unload: bool = False

    @property
    def namespace(self) -> str:
        return self.bundle.rsplit("/", 1)[0]

    @property
    def range(self) -> str:
        return self.bundle.rsplit("/", 1)[1]

    @property
    def is_move(self) -> bool:
        return self.action in ("unload", "transfer")

    def describe(self) -> str:
        if self.is_move:
            to = self.destination or "the next lookup's choice"
            return f"{self.action} {self.bundle} from {self.broker} to {to}"
        cuts = ", ".join(format_position(b) for b in self.boundaries)
        return f"split {self.bundle} at {cuts}" + (", then unload the new bundles"
                                                    if self.unload else "")


@dataclass(frozen=True)
class PlanFile:
    path: str
    digest: str  # sha256 of the file's bytes: a resumed run must carry out the same plan
    cluster: str
    captured_at: int  # epoch ms
    load_manager: str
    shedding: str
    placement: str
    actions: tuple[PlannedAction, ...]


def read_plan(path: Path | str) -> PlanFile:
    """A plan@1 file (JSON or YAML, by its content), checked."""
    from lbctl.safe.files import read_regular

    name = str(path)
    data = read_regular(name, what="a plan file", error=PlanError)
    if not data.strip():
        raise PlanError(f"{name}: empty file (expected a plan@1 JSON or YAML document)")
    doc = _decode(name, data)
    return parse_plan(doc, name, hashlib.sha256(data).hexdigest())


def _decode(name: str, data: bytes) -> Any:
    from lbctl.sources.snapshot import load_json

    try:
        if data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith((b"{", b"[")):
            return load_json(name, data)
        from lbctl.sources.snapshot_yaml import load_yaml

        return load_yaml(name, data)
    except SnapshotError as e:
        raise PlanError(str(e).replace("(expected a snapshot)", "(expected a plan)")) from None


def parse_plan(doc: Any, name: str, digest: str = "") -> PlanFile:
    if not isinstance(doc, dict):
        raise PlanError(f"{name}: expected a plan@1 object")
    fmt = doc.get("format")
    if fmt != PLAN_FORMAT:
        from lbctl.model.wire.snapshot import FORMAT as SNAPSHOT_FORMAT

        # a newcomer's first apply is often of the snapshot itself: say how a plan is made of it
        hint = (f" (a snapshot: lbctl recommend {shlex.quote(name)} -o json > plan.json, or "
                "lbctl propose,"
                " writes a plan of it)" if fmt == SNAPSHOT_FORMAT else "")
        raise PlanError(f"{name}: format is {fmt!r}, expected {PLAN_FORMAT!r}{hint}")
    actions = doc.get("actions")
    if isinstance(actions, list):  # which record an action is, before its fields are read
        for i, a in enumerate(actions):
            if isinstance(a, dict) and a.get("action") not in KINDS:
                raise PlanError(f"{name}: actions[{i}].action: {a.get('action')!r} is not one "
                                f"of {', '.join(KINDS)}")
    try:
        header = msgspec.convert(doc, wire.PlanHeader)
    except msgspec.ValidationError as e:
        problem = first_problem(doc, wire.PlanHeader)
        raise PlanError(f"{name}: {problem.path}: {problem.message}" if problem
                        else f"{name}: {e}") from None
    captured = _time(header.capturedAt, f"{name}: capturedAt")
    out = tuple(_action(a, i, f"{name}: actions[{i}]") for i, a in enumerate(header.actions))
    _once(out, name)
    return PlanFile(name, digest, header.cluster, captured, header.loadManager or "modular",
                    header.shedding or "", header.placement or "", out)


def _once(actions: tuple[PlannedAction, ...], name: str) -> None:
    """A bundle is acted on at most once per plan: a second unload of it would be sent (and
    journaled) twice, a split and an unload would race. The plan is refused, not deduplicated —
    which of the two the author meant is not lbctl's guess. Skipped actions are notes, not
    requests, and may repeat. (Pulsar's own cycle never lists a bundle twice: the bundles it
    splits are left out of shedding, ``ModularLoadManagerImpl.checkNamespaceBundleSplit``.)"""
    first: dict[str, PlannedAction] = {}
    for a in actions:
        if a.skipped is not None:
            continue
        if a.bundle in first:
            kinds = {a.action, first[a.bundle].action}
            # propose plans a move and, for the bundle as it lands, a split (its "split-and-
            # unload" warning): say how to carry out both
            then = ("; move it first and split it in a plan of its own (a propose plan: "
                    "propose --no-splits plans the moves alone)"
                    if "split" in kinds and len(kinds) > 1 else "")
            raise PlanError(f"{name}: actions[{a.step - 1}].bundle: {a.bundle} is already "
                            f"actions[{first[a.bundle].step - 1}]: a plan acts on a bundle once "
                            f"(refused, nothing was sent){then}")
        first[a.bundle] = a


def _figure(value: float | None, where: str) -> float | None:
    """A rate or throughput: absent, or a finite number >= 0. A negative figure would shrink
    the sum ``--max-throughput`` caps (and let the actions after it through)."""
    if value is not None and not (value >= 0 and math.isfinite(value)):
        raise PlanError(f"{where}: {value!r} is not a rate (expected a number >= 0)")
    return value


def _time(value: str, where: str) -> int:
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise PlanError(f"{where}: {value!r} is not an RFC 3339 time") from None
    if dt.tzinfo is None:
        raise PlanError(f"{where}: {value!r} has no time zone (RFC 3339 needs Z or an offset)")
    return int(dt.timestamp() * 1000)


def _action(a: wire.UnloadAction | wire.TransferAction | wire.SplitAction, i: int,
            where: str) -> PlannedAction:
    kind = "split" if isinstance(a, wire.SplitAction) else (
        "transfer" if isinstance(a, wire.TransferAction) else "unload")
    bundle = a.bundle
    try:
        BundleName.parse(bundle)
    except BundleNameError as e:
        raise PlanError(f"{where}.bundle: {e}") from None
    from lbctl.admin.client import split_namespace
    from lbctl.errors import UsageError

    try:
        split_namespace(bundle.rsplit("/", 1)[0])
    except UsageError as e:
        raise PlanError(f"{where}.bundle: {e}") from None
    skipped = None if a.skipped is UNSET else a.skipped
    common: dict[str, Any] = {
        "step": i + 1, "action": kind, "bundle": bundle, "broker": a.broker,
        "reason": a.reason, "msg_rate": _figure(a.msgRate, f"{where}.msgRate"),
        "throughput": _figure(a.throughput, f"{where}.throughput"),
        "skipped": skipped,
    }
    if not isinstance(a, wire.SplitAction):
        dest = a.destinationBroker
        if dest is not None:
            dest = dest.removeprefix("http://").removeprefix("https://").rstrip("/")
        if dest is not None and dest == a.broker and skipped is None:
            raise PlanError(f"{where}: the destination is the current owner {a.broker}")
        if kind == "transfer" and dest is None and skipped is None:
            raise PlanError(f"{where}: a transfer needs a destinationBroker")
        return PlannedAction(destination=dest, **common)
    rng = BundleName.parse(bundle).range
    if not a.boundaries and skipped is None:
        raise PlanError(f"{where}.boundaries: expected a non-empty list of \"0x%08x\" positions")
    bounds: list[int] = []
    for j, x in enumerate(a.boundaries):
        try:
            pos: int | None = parse_position(x)
        except BundleNameError:
            pos = None
        if pos is None:
            raise PlanError(f"{where}.boundaries[{j}]: {x!r} is not a position like 0x40000000")
        if not rng.lower < pos < rng.upper:
            raise PlanError(f"{where}.boundaries[{j}]: {x} is not inside {rng}")
        bounds.append(pos)
    if bounds != sorted(set(bounds)):
        raise PlanError(f"{where}.boundaries: expected ascending distinct positions")
    return PlannedAction(algorithm=a.algorithm, boundaries=tuple(bounds), unload=a.unload,
                         **common)
