"""Notifications: JSON lines on stdout, and webhooks (generic JSON or a Slack-compatible body).

Each anomaly is announced once when raised and once when resolved (the tracker makes each event
once; a webhook's queue is saved with the history, so a restart neither loses nor repeats one).
A webhook that fails is retried at the next tick with a growing back-off, and never stops the
watcher; ``max_per_minute`` caps a burst (the rest wait for the next minute, in order).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec
from msgspec import Struct

from lbctl.errors import UsageError
from lbctl.model.cluster import ClusterState, iso_time
from lbctl.safe.files import atomic_write, read_if_present
from lbctl.safe.text import json_hidden_escaped
from lbctl.watch.anomalies import Event

FORMATS = ("json", "slack")
_ICON = {"critical": ":red_circle:", "warning": ":warning:", "info": ":information_source:"}


def record(event: Event, cluster: str) -> dict[str, Any]:
    """The notification's JSON (what stdout and a generic webhook receive)."""
    a = event.anomaly
    return {"event": event.event, "id": a.id, "kind": a.kind, "subject": a.subject,
            "severity": a.severity, "message": a.message, "cluster": cluster,
            "firstSeen": iso_time(a.first_seen), "lastSeen": iso_time(a.last_seen),
            "raisedAt": iso_time(a.raised_at) if a.raised_at is not None else None,
            "resolvedAt": iso_time(a.resolved_at) if a.resolved_at is not None else None}


def slack_body(rec: dict[str, Any]) -> dict[str, Any]:
    """A Slack incoming-webhook body (``text``), also accepted by Mattermost and Rocket.Chat."""
    if rec["event"] == "resolved":
        text = f":white_check_mark: resolved [{rec['cluster']}] {rec['kind']} {rec['subject']}"
    else:
        text = (f"{_ICON.get(rec['severity'], '')} [{rec['cluster']}] {rec['severity']} "
                f"{rec['kind']} {rec['subject']}: {rec['message']}")
    return {"text": text}


class _Queue(Struct):
    pending: list[dict[str, Any]] = []
    failures: int = 0
    retry_at: float = 0.0


class Webhook:
    """One webhook: its queue (saved in ``state_dir``), rate limit and back-off."""

    def __init__(self, url: str, fmt: str, state_dir: Path, *, max_per_minute: int = 20,
                 post: Callable[[str, Any], None] | None = None,
                 warn: Callable[[str], None] = lambda _m: None):
        if fmt not in FORMATS:
            raise UsageError(f"--webhook-format {fmt!r}: one of {', '.join(FORMATS)}")
        import hashlib

        from lbctl.admin.webhook import check_webhook_url

        check_webhook_url(url)
        self.url, self.fmt, self.max_per_minute, self.warn = url, fmt, max_per_minute, warn
        key = hashlib.sha256(url.encode()).hexdigest()[:16]
        self.path = state_dir / f"webhook-{key}.json"
        self.sent: list[float] = []
        if post is None:
            from lbctl.admin.webhook import post_json

            post = post_json
        self.post = post
        # read safely (a link or FIFO at the queue's name is one line, not followed or waited
        # on); a queue that does not decode starts afresh, as before
        raw = read_if_present(self.path, what="a webhook queue (JSON)", error=UsageError)
        try:
            self.q = _Queue() if raw is None else msgspec.json.decode(raw, type=_Queue)
        except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
            self.q = _Queue()

    def _save(self) -> None:
        atomic_write(str(self.path), msgspec.json.encode(self.q), error=UsageError)

    def offer(self, records: Sequence[dict[str, Any]]) -> None:
        """Queue records (saved before anything is sent: a crash loses none)."""
        self.q.pending.extend(records)
        self._save()

    def flush(self, now: float) -> int:
        """Send what the rate limit and the back-off allow; the number sent."""
        from lbctl.admin.errors import AdminError

        if not self.q.pending or now < self.q.retry_at:
            return 0
        self.sent = [t for t in self.sent if now - t < 60]
        n = 0
        while self.q.pending and len(self.sent) < self.max_per_minute:
            rec = self.q.pending[0]
            body = slack_body(rec) if self.fmt == "slack" else rec
            try:
                self.post(self.url, body)
            except AdminError as e:
                self.q.failures += 1
                self.q.retry_at = now + min(600.0, 5.0 * 2 ** min(self.q.failures, 7))
                self.warn(f"{e}; {len(self.q.pending)} notification(s) kept, retried in "
                          f"{self.q.retry_at - now:.0f} s")
                break
            self.q.pending.pop(0)
            self.q.failures = 0
            self.sent.append(now)
            n += 1
        self._save()
        return n


class Notifier:
    """Stdout JSON lines and the webhooks."""

    def __init__(self, webhooks: Sequence[Webhook], *, stdout: bool = True):
        self.webhooks = list(webhooks)
        self.stdout = stdout

    def events(self, events: Sequence[Event], state: ClusterState) -> None:
        recs = [record(e, state.cluster) for e in events]
        if self.stdout:
            for r in recs:
                sys.stdout.write(json_hidden_escaped(msgspec.json.encode(r)).decode() + "\n")
            sys.stdout.flush()
        for w in self.webhooks:
            w.offer(recs)

    def flush(self, now: float) -> None:
        for w in self.webhooks:
            w.flush(now)
