"""Plans waiting for review: the watcher's healing plans, and the operator's verdict on each.

Cruise Control's review board and Strimzi's ``KafkaRebalance`` approval, as files: each plan is a
plan@1 document in ``<history>/plans/<id>.json`` (the very file ``lbctl apply`` takes) with its
record beside it (``<id>.meta.json``: status, the anomaly that caused it, when, by whom decided).
``lbctl plans approve ID`` carries the plan out through ``lbctl apply``'s runner — re-validated
against the cluster as it is then, journaled with the anomaly — and ``reject`` closes it.
Statuses: ``pending`` → ``approved`` → ``applied`` | ``partial`` | ``failed``, or ``rejected``, or
``withdrawn``: the anomaly it was planned for resolved before anyone approved it (a plan for a
state that is gone is not approvable — re-validated, most of its actions would be skipped, and what
was left would move load the cluster no longer needs moved). Every decision is also appended to
``<history>/plans/journal.jsonl``, one JSON line each (plan, status, when, why), so a withdrawal
or an approval is on record even after the plan's record is gone.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import re
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct

from lbctl.errors import LbctlError, UsageError
from lbctl.safe.files import atomic_write, private_dir, read_regular

STATUSES = ("pending", "approved", "applied", "partial", "failed", "rejected", "withdrawn")
JOURNAL = "journal.jsonl"
_ID = re.compile(r"^p-\d{8}T\d{6}-[0-9a-f]{6}$")


class PlanMeta(Struct, frozen=True):
    id: str
    status: str
    created: str  # RFC 3339, cluster time of the capture it was planned on
    anomaly: str | None
    source: str  # "recommend" (the configured strategy) or "propose" (lbctl's planner)
    actions: int
    decided: str | None = None
    note: str | None = None
    #: when ``lbctl watch --heal KIND=apply`` approved it itself (the watcher's clock, epoch
    #: seconds): ``--heal-max-per-hour`` counts these, so a restarted watcher keeps to its cap
    auto_at: float | None = None

    def to_dict(self) -> dict[str, object]:
        return msgspec.structs.asdict(self)


def _journal_states(meta: PlanMeta) -> dict[str, tuple[str, str]]:
    """bundle → (last state, why) in the apply journal ``meta``'s outcome names, for the runs
    whose reason names the plan (an unreadable journal, or none: nothing)."""
    note = meta.note or ""
    _, sep, path = note.rpartition("; journal ")
    if not sep or not path:
        return {}
    try:  # a regular file, never a link followed nor a FIFO waited on (hostile20)
        raw = read_regular(path, what="a journal", error=UsageError)
    except LbctlError:
        return {}
    mine = f"lbctl watch plan {meta.id}"
    runs: set[str] = set()
    out: dict[str, tuple[str, str]] = {}
    for line in raw.splitlines():
        try:
            r = msgspec.json.decode(line)
        except msgspec.DecodeError:
            continue
        if not isinstance(r, dict):
            continue
        if r.get("state") == "apply-start" and str(r.get("reason", "")).startswith(mine):
            runs.add(str(r.get("run")))
        if str(r.get("run")) not in runs or not isinstance(r.get("bundle"), str):
            continue
        state = str(r.get("state"))
        if state == "verified":
            state = str(r.get("outcome") or state)
        out[r["bundle"]] = (state, str(r.get("why") or r.get("error") or ""))
    return out


class PlanQueue:
    def __init__(self, history: Path):
        self.dir = history / "plans"

    def _meta(self, pid: str) -> Path:
        return self.dir / f"{pid}.meta.json"

    def plan_path(self, pid: str) -> Path:
        return self.dir / f"{pid}.json"

    def add(self, document: bytes, *, created_ms: int, created: str, anomaly: str | None,
            source: str, actions: int) -> PlanMeta:
        from datetime import UTC, datetime

        private_dir(str(self.dir))
        stamp = datetime.fromtimestamp(created_ms / 1000, UTC).strftime("%Y%m%dT%H%M%S")
        pid = f"p-{stamp}-{hashlib.sha256(document).hexdigest()[:6]}"
        if self._meta(pid).exists():
            # the same plan on the same capture (two anomalies raised by one tick): the plan
            # queued first stands — rewriting its record would turn an applied plan back to
            # pending, and apply it a second time
            return self.get(pid)
        atomic_write(str(self.plan_path(pid)), document, error=UsageError)
        meta = PlanMeta(pid, "pending", created, anomaly, source, actions)
        self._write(meta)
        return meta

    def _write(self, meta: PlanMeta) -> None:
        atomic_write(str(self._meta(meta.id)), msgspec.json.encode(meta) + b"\n", error=UsageError)

    def list(self) -> list[PlanMeta]:
        if not self.dir.is_dir():
            return []
        out = []
        for name in sorted(os.listdir(self.dir)):
            if name.endswith(".meta.json") and _ID.match(name[:-10]):
                try:
                    meta = msgspec.json.decode(_record(self.dir / name), type=PlanMeta)
                except (LbctlError, msgspec.DecodeError, RecursionError, UnicodeDecodeError):
                    continue
                if meta.id == name[:-10]:  # a record naming another id is not this plan's
                    out.append(meta)
        return out

    def get(self, pid: str) -> PlanMeta:
        if not _ID.match(pid):
            raise UsageError(f"{pid!r} is not a plan id (lbctl plans list shows them)")
        if not os.path.lexists(self._meta(pid)):
            raise UsageError(f"no plan {pid} in {self.dir} (lbctl plans list shows them)")
        try:
            meta = msgspec.json.decode(_record(self._meta(pid)), type=PlanMeta)
        except (msgspec.DecodeError, UnicodeDecodeError) as e:
            raise UsageError(f"{self._meta(pid)}: unreadable ({e})") from None
        except RecursionError:
            raise UsageError(f"{self._meta(pid)}: unreadable (nested too deeply)") from None
        if meta.id != pid:
            # the record's id names the plan's file (plan_path) and is printed: one from the
            # file that is not its name's was a path with a NUL in it (internal error) or a
            # line of its own on the terminal (hostile21's sweep)
            raise UsageError(f"{self._meta(pid)}: the record is not plan {pid}'s (its id is "
                             f"{msgspec.json.encode(meta.id).decode()[:80]})")
        return meta

    def decide(self, pid: str, status: str, *, when: str, note: str | None = None,
               allowed_from: tuple[str, ...] = ("pending",),
               auto_at: float | None = None) -> PlanMeta:
        assert status in STATUSES, status
        meta = self.get(pid)
        if meta.status not in allowed_from:
            why = f" ({meta.note})" if meta.status == "withdrawn" and meta.note else ""
            raise UsageError(f"plan {pid} is {meta.status}{why}, not {' or '.join(allowed_from)}: "
                             "nothing changed")
        meta = msgspec.structs.replace(meta, status=status, decided=when, note=note,
                                       auto_at=auto_at if auto_at is not None else meta.auto_at)
        self._write(meta)
        self._journal(meta)
        return meta

    def _journal(self, meta: PlanMeta) -> None:
        """One line in the queue's journal for a decision (locked, fsynced, a torn last line cut
        off first: :func:`lbctl.safe.files.append_record`)."""
        from lbctl.safe.files import append_record, is_json_line

        line = msgspec.json.encode({"plan": meta.id, "status": meta.status, "at": meta.decided,
                                    "anomaly": meta.anomaly, "why": meta.note}) + b"\n"
        append_record(str(self.dir / JOURNAL), line, gz=False, error=UsageError,
                      complete=is_json_line)

    def withdraw_for(self, anomaly: str, *, when: str, why: str) -> tuple[PlanMeta, ...]:
        """Withdraw the pending plans of ``anomaly`` (it resolved): never approvable after."""
        return tuple(self.decide(m.id, "withdrawn", when=when, note=why)
                     for m in self.list() if m.anomaly == anomaly and m.status == "pending")

    def withdraw_if_resolved(self, pid: str, *, when: str) -> PlanMeta | None:
        """Withdraw pending plan ``pid`` when its anomaly is no longer active in the watcher's
        saved state (resolved while no watcher ran, or before this check existed); the withdrawn
        record, else None. A plan with no anomaly, or no saved state, is left as it is."""
        from lbctl.watch.anomalies import ANOMALY_FILE, Tracker

        meta = self.get(pid)
        if meta.status != "pending" or meta.anomaly is None:
            return None
        saved = self.dir.parent / ANOMALY_FILE
        if not saved.is_file():
            return None
        t = Tracker()
        t.load(saved)
        if meta.anomaly in t.open:
            return None
        gone = next((a for a in t.resolved if a.id == meta.anomaly), None)
        at = ""
        if gone is not None and gone.resolved_at is not None:
            from lbctl.model.cluster import iso_time

            at = f" at {iso_time(gone.resolved_at)}"
        return self.decide(pid, "withdrawn", when=when,
                           note=f"anomaly {meta.anomaly} resolved{at}")

    def raw(self, pid: str) -> bytes:
        """The plan@1 file's bytes (a regular file, never a link followed; one line if not)."""
        from lbctl.safe.files import read_regular

        return read_regular(str(self.plan_path(pid)), what="a plan@1 file", error=UsageError)

    def document(self, pid: str) -> dict[str, Any]:
        """The plan@1 document, decoded (one line when it is not JSON)."""
        try:
            doc = msgspec.json.decode(self.raw(pid))
        except (msgspec.DecodeError, UnicodeDecodeError) as e:
            raise UsageError(f"{self.plan_path(pid)}: not a plan@1 document ({e})") from None
        except RecursionError:
            raise UsageError(f"{self.plan_path(pid)}: not a plan@1 document (nested too "
                             "deeply)") from None
        if not isinstance(doc, dict):
            raise UsageError(f"{self.plan_path(pid)}: not a plan@1 document")
        return doc

    def actions(self, meta: PlanMeta) -> builtins.list[dict[str, str]]:
        """The plan's actions for ``lbctl plans show``: what each does, its status and why.

        The status is the plan's while nothing of it ran (``pending``, ``rejected``,
        ``withdrawn``; ``skipped`` for an action the plan itself skipped); once approved, each
        action's last state in the apply journal the outcome names (``skipped`` with the
        re-validation's reason, ``done``, ``failed`` …), from the runs whose reason names this
        plan. Why: the skip's reason, else the strategy's reason and the planner's account."""
        doc = self.document(meta.id)
        if not isinstance(doc.get("actions"), list):
            raise UsageError(f"{self.plan_path(meta.id)}: not a plan@1 document (no actions)")
        moves = (doc.get("explanation") or {}).get("moves") or []
        told = {m.get("bundle"): m.get("why") for m in moves if isinstance(m, dict)}
        ran = _journal_states(meta) if meta.status in ("applied", "partial", "failed") else {}
        rows: builtins.list[dict[str, str]] = []
        for a in doc["actions"]:
            if not isinstance(a, dict):
                continue
            bundle = str(a.get("bundle", ""))
            dest = a.get("destinationBroker")
            what = f"{a.get('action', '?')} {bundle} from {a.get('broker', '?')}" + (
                f" to {dest}" if dest else "")
            if a.get("skipped"):
                status, why = "skipped", str(a.get("skipped"))
            elif bundle in ran:
                status, why = ran[bundle]
            else:
                status = {"applied": "not sent", "partial": "not sent", "failed": "not sent",
                          "approved": "approved"}.get(meta.status, meta.status)
                why = ""
            if not why:
                why = "; ".join(str(x) for x in (a.get("reason"), told.get(bundle)) if x)
            rows.append({"#": str(len(rows) + 1), "action": what, "status": status, "why": why})
        return rows

    def auto_applied_since(self, since: float) -> int:
        """How many plans the watcher approved itself at or after ``since`` (epoch seconds)."""
        return sum(1 for m in self.list() if m.auto_at is not None and m.auto_at >= since)

    def pending_for(self, anomaly: str) -> PlanMeta | None:
        return next((m for m in self.list() if m.anomaly == anomaly
                     and m.status in ("pending", "approved")), None)


def _record(path: Path) -> bytes:
    """A plan's record: a regular file, never a link followed nor a FIFO waited on (``plans
    list`` hung on a FIFO, and read a link's target: hostile20), at most a MiB."""
    return read_regular(str(path), what="a plan record (JSON)", error=UsageError, limit=1 << 20)
