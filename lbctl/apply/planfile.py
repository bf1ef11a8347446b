"""Reading a plan@1 file for ``lbctl apply``: any valid plan — ``recommend -o json``, ``propose``,
``rebalance-after``, a rollback plan, or one written by hand.

Only what carrying out a plan needs is required (the header's ``format``, ``cluster`` and
``capturedAt``, and each action's ``action``, ``bundle``, ``broker``, and for a split its
``boundaries``); the per-broker rows and the summary are for people and are not read. Errors name
the file and the action (``plan.json: actions[3].bundle: …``), one line, exit 1.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from lbctl.errors import PlanError, SnapshotError
from lbctl.model.bundle import BundleName, BundleNameError, format_position, parse_position

PLAN_FORMAT = "lbctl/plan@1"
KINDS = ("unload", "transfer", "split")


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
        raise PlanError(f"{name}: format is {fmt!r}, expected {PLAN_FORMAT!r}")
    cluster = _str(doc, "cluster", name)
    captured = _time(doc.get("capturedAt"), f"{name}: capturedAt")
    actions = doc.get("actions")
    if not isinstance(actions, list):
        raise PlanError(f"{name}: actions: expected a list")
    out = tuple(_action(a, i, f"{name}: actions[{i}]") for i, a in enumerate(actions))
    lm = doc.get("loadManager")
    return PlanFile(name, digest, cluster, captured,
                    lm if isinstance(lm, str) else "modular",
                    str(doc.get("shedding") or ""), str(doc.get("placement") or ""), out)


def _str(obj: dict[str, Any], key: str, where: str, *, empty: bool = False) -> str:
    v = obj.get(key)
    if not isinstance(v, str) or (not v and not empty):
        raise PlanError(f"{where}.{key}: expected a non-empty string" if not empty
                        else f"{where}.{key}: expected a string")
    return v


def _time(value: Any, where: str) -> int:
    if not isinstance(value, str):
        raise PlanError(f"{where}: expected an RFC 3339 time")
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise PlanError(f"{where}: {value!r} is not an RFC 3339 time") from None
    if dt.tzinfo is None:
        raise PlanError(f"{where}: {value!r} has no time zone (RFC 3339 needs Z or an offset)")
    return int(dt.timestamp() * 1000)


def _figure(a: dict[str, Any], key: str, where: str) -> float | None:
    import math

    v = a.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
        raise PlanError(f"{where}.{key}: expected a finite number or null")
    return float(v)


def _action(a: Any, i: int, where: str) -> PlannedAction:
    if not isinstance(a, dict):
        raise PlanError(f"{where}: expected an object")
    kind = a.get("action")
    if kind not in KINDS:
        raise PlanError(f"{where}.action: {kind!r} is not one of {', '.join(KINDS)}")
    bundle = _str(a, "bundle", where)
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
    broker = _str(a, "broker", where, empty=kind == "split")
    skipped = a.get("skipped")
    if skipped is not None and not isinstance(skipped, str):
        raise PlanError(f"{where}.skipped: expected a string or absent")
    reason = a.get("reason")
    common: dict[str, Any] = {
        "step": i + 1, "action": kind, "bundle": bundle, "broker": broker,
        "reason": reason if isinstance(reason, str) else "",
        "msg_rate": _figure(a, "msgRate", where), "throughput": _figure(a, "throughput", where),
        "skipped": skipped,
    }
    if kind != "split":
        dest = a.get("destinationBroker")
        if dest is not None and (not isinstance(dest, str) or not dest):
            raise PlanError(f"{where}.destinationBroker: expected a broker id or null")
        if dest is not None:
            dest = dest.removeprefix("http://").removeprefix("https://").rstrip("/")
        if dest is not None and dest == broker and skipped is None:
            raise PlanError(f"{where}: the destination is the current owner {broker}")
        if kind == "transfer" and dest is None and skipped is None:
            raise PlanError(f"{where}: a transfer needs a destinationBroker")
        return PlannedAction(destination=dest, **common)
    rng = BundleName.parse(bundle).range
    raw = a.get("boundaries")
    if not isinstance(raw, list) or (not raw and skipped is None):
        raise PlanError(f"{where}.boundaries: expected a non-empty list of \"0x%08x\" positions")
    bounds: list[int] = []
    for j, x in enumerate(raw):
        try:
            pos = parse_position(str(x)) if isinstance(x, str) else None
        except BundleNameError:
            pos = None
        if pos is None:
            raise PlanError(f"{where}.boundaries[{j}]: {x!r} is not a position like 0x40000000")
        if not rng.lower < pos < rng.upper:
            raise PlanError(f"{where}.boundaries[{j}]: {x} is not inside {rng}")
        bounds.append(pos)
    if bounds != sorted(set(bounds)):
        raise PlanError(f"{where}.boundaries: expected ascending distinct positions")
    algo = a.get("algorithm")
    unload = a.get("unload", False)
    if not isinstance(unload, bool):
        raise PlanError(f"{where}.unload: expected true or false")
    return PlannedAction(algorithm=algo if isinstance(algo, str) else None,
                         boundaries=tuple(bounds), unload=unload, **common)
