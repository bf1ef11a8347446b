"""Reading the journal back: what a run sent, what it verified, and where to resume.

The journal stays one JSON object per line (:mod:`lbctl.executor` writes it). ``apply`` and
``drain`` extend the request lines additively — ``plan``, ``planDigest``, ``step``, ``bundle``,
``source``, ``destination``, ``reason`` — and add lines of their own, each with the run id and a
``state`` that no request line uses:

* ``apply-start`` (plan, digest, cluster, actions, the steps to send, ``reason``, ``resumes``:
  the run it continues), ``apply-end`` (``result``: ``complete``/``partial``/``dry-run``, why,
  the rollback plan's path when one was written; a partial run's ``sent`` and ``notSent``
  steps);
* ``verified`` (step, bundle, ``outcome``: done / done-elsewhere / not-reassigned / not-moved /
  failed, ``owner``, ``seconds``), ``skipped`` (step, ``why``: re-validation, a cap, declined);
* ``balancer-paused`` (``previous``: each setting's override before, null when it had none) and
  ``balancer-restored``.

Lines are read by the one journal reader (:func:`lbctl.sources.journal.read_records`, each line a
:class:`~lbctl.model.wire.journal.JournalRecord`) and handed on here as their plain values (the
fields a line has); times by its one parser, in either form the journal has held.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lbctl.errors import ConfigError

_UNLOAD = re.compile(r"/admin/v2/namespaces/([^/?]+)/([^/?]+)/([^/?]+)/unload(?:\?|$)")


def read_records(path: Path | str, *, tail_bytes: int | None = None) -> list[dict[str, Any]]:
    """Every readable record of a journal (a cut or foreign line is skipped) as its plain values;
    with ``tail_bytes``, of its last that many bytes only (recent records: the grace period)."""
    import msgspec

    from lbctl.sources.journal import read_records as records

    return [msgspec.to_builtins(r) for r in records(path, tail_bytes=tail_bytes)]


def read_applied(path: Path | str, *, tail_bytes: int | None = None) -> list[dict[str, Any]]:
    """The request lines of requests that may have been applied (a request the broker refused
    is left out: :func:`lbctl.sources.journal.maybe_applied`), as plain values — what the
    grace-period check counts."""
    import msgspec

    from lbctl.sources.journal import maybe_applied
    from lbctl.sources.journal import read_records as records

    return [msgspec.to_builtins(r)
            for r in maybe_applied(records(path, tail_bytes=tail_bytes))]


def journal_unloads(path: Path | str, since: float,
                    warn: Callable[[str], None] | None = None) -> dict[str, float]:
    """:func:`recent_unloads` of the journal at ``path`` (its last 16 MB): {} when there is none;
    one that cannot be read is said through ``warn`` and counts as none. The grace-period check
    of ``apply`` and the plans meant for it (``rebalance-after``) read the same unloads."""
    if not Path(path).exists():
        return {}
    try:
        return recent_unloads(read_applied(path, tail_bytes=16 << 20), since)
    except ConfigError as e:
        if warn is not None:
            warn(f"the journal cannot be read for recent unloads: {e}")
        return {}


def time_of(rec: dict[str, Any]) -> float | None:
    """A record's time as epoch seconds (``None`` without one)."""
    from lbctl.model.wire.journal import seconds_of

    return seconds_of(rec.get("time"))


def recent_unloads(records: Iterable[dict[str, Any]], since: float) -> dict[str, float]:
    """bundle → when an unload of it was last sent (at or after ``since``), whatever the run."""
    out: dict[str, float] = {}
    for r in records:
        if r.get("state") not in ("sending", "done") or r.get("method") != "PUT":
            continue
        when = time_of(r)
        if when is None or when < since:
            continue
        m = _UNLOAD.search(str(r.get("url", "")))
        if not m:
            continue
        from urllib.parse import unquote

        bundle = "/".join(unquote(x) for x in m.groups())
        out[bundle] = max(when, out.get(bundle, when))
    return out


@dataclass
class StepHistory:
    sent: bool = False  # a request line ("sending") exists
    confirmed: bool = False  # the broker answered 2xx ("done")
    failed: str | None = None
    interrupted: bool = False
    outcome: str | None = None  # the verification's
    owner: str | None = None


@dataclass
class RunHistory:
    """What earlier runs of one plan (same digest) did, step by step."""

    plan: str
    digest: str
    cluster: str
    runs: list[str] = field(default_factory=list)
    reason: str | None = None
    steps: dict[int, StepHistory] = field(default_factory=dict)

    def in_doubt(self) -> list[int]:
        """Steps sent but never answered (killed in flight): maybe applied."""
        return sorted(s for s, h in self.steps.items()
                      if h.sent and not h.confirmed and h.failed is None)


def run_kind(start: dict[str, Any]) -> str:
    """The command an ``apply-start`` record's run belongs to: ``apply``, ``drain`` or ``fill``
    (a journal older than the ``kind`` field held apply's runs only)."""
    kind = start.get("kind")
    return kind if isinstance(kind, str) and kind else "apply"


def last_run(records: list[dict[str, Any]], run: str | None = None, *,
             journal: str = "JOURNAL") -> RunHistory:
    """The history of the plan of the last ``apply-start`` of an apply (or of run ``run``, of
    any kind: the operator named it), gathered over every run of the same plan digest.

    Without ``run`` a drain's or fill's run is never taken: a drain running now holds the
    cluster lock, so resuming it was stopped there, and an older one is not apply's to continue
    unasked (walk22). When the journal's last run is such a run and still open (no
    ``apply-end``, or a partial one), the error says so and gives the ``--run`` that resumes it,
    rather than silently resuming an older apply behind it."""
    starts = [r for r in records if r.get("state") == "apply-start"]
    if run is not None:
        starts = [r for r in starts if r.get("run") == run]
    elif starts and run_kind(starts[-1]) != "apply":
        last = starts[-1]
        ends = [r for r in records
                if r.get("state") == "apply-end" and r.get("run") == last.get("run")]
        if not ends or ends[-1].get("result") == "partial":
            own = [r for r in starts if run_kind(r) == "apply"]
            status = "partial" if ends else "running, or killed"
            raise ConfigError(
                f"the journal's last open run is a {run_kind(last)} (run {last.get('run')}, "
                f"{status}), not an apply: resume it with lbctl apply --resume {journal} "
                f"--run {last.get('run')}"
                + (f", or the last apply with --run {own[-1].get('run')}" if own else ""))
    if run is None:
        starts = [r for r in starts if run_kind(r) == "apply"]
    if not starts:
        raise ConfigError("the journal has no apply run to resume"
                          + (f" with id {run}" if run else ""))
    start = starts[-1]
    digest = str(start.get("planDigest") or "")
    hist = RunHistory(str(start.get("plan") or ""), digest, str(start.get("cluster") or ""),
                      reason=start.get("reason") if isinstance(start.get("reason"), str) else None)
    runs = {str(r.get("run")) for r in starts if r.get("planDigest") == digest} | {
        str(r.get("run")) for r in records
        if r.get("state") == "apply-start" and r.get("planDigest") == digest}
    hist.runs = sorted(runs)
    for r in records:
        if str(r.get("run")) not in runs or r.get("planDigest") not in (digest, None):
            continue
        step = r.get("step")
        if not isinstance(step, int) or isinstance(step, bool):
            continue
        h = hist.steps.setdefault(step, StepHistory())
        state = r.get("state")
        if state == "sending":
            h.sent = True
        elif state == "done":
            h.confirmed = True
        elif state == "failed":
            h.failed = str(r.get("error") or "failed")
        elif state == "interrupted":
            h.interrupted = True
        elif state == "verified":
            h.outcome = r.get("outcome") if isinstance(r.get("outcome"), str) else None
            h.owner = r.get("owner") if isinstance(r.get("owner"), str) else None
    return hist


def paused_balancer(records: list[dict[str, Any]], cluster: str | None = None
                    ) -> dict[str, Any] | None:
    """The last ``balancer-paused`` record not followed by a ``balancer-restored`` (of the same
    cluster), or None."""
    found: dict[str, Any] | None = None
    for r in records:
        if cluster is not None and r.get("cluster") not in (cluster, None):
            continue
        if r.get("state") == "balancer-paused":
            found = r
        elif r.get("state") == "balancer-restored":
            found = None
    return found
