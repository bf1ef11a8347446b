"""``lbctl journal``: the changes lbctl sent, oldest first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.render import table
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.sources.journal import JournalEntry

JOURNAL_SCHEMA = Schema("journal", "journal line (one step of one request)", (
    col("time", "time", "when the step was written"),
    col("run", "string", "the lbctl invocation it belongs to"),
    col("state", "string", "sending (before the request), done or failed"),
    col("action", "string", "what the request does, in words"),
    col("method", "string", "the HTTP method"),
    col("url", "string", "the URL (credentials redacted)"),
    col("body", "string", "the JSON body, if any, as sent"),
    col("status", "integer", "the HTTP status (done/failed)"),
    col("error", "string", "the error (failed)"),
))


def _body(v: Any) -> str | None:
    import json

    return None if v is None else json.dumps(v, separators=(",", ":"))


def _state_style(text: str) -> str | None:
    return {"done": "success", "failed": "failure"}.get(text)


@dataclass(frozen=True)
class JournalView:
    path: str
    entries: tuple[JournalEntry, ...]
    since: str | None = None
    schema: ClassVar[Schema] = JOURNAL_SCHEMA

    def to_data(self) -> Any:
        return {"journal": self.path, "entries": [e.to_dict() for e in self.entries]}

    def to_rows(self) -> list[dict[str, Any]]:
        return [{**e.to_dict(), "body": _body(e.body)} for e in self.entries]

    def to_text(self) -> str:
        since = f" since {self.since}" if self.since else ""
        if not self.entries:
            return f"{self.path}: no change recorded{since}"
        rows = [{"time (UTC)": e.time.strftime("%Y-%m-%d %H:%M:%S"), "state": e.state,
                 "action": e.action, "status": "" if e.status is None else str(e.status),
                 "run": e.run, "error": e.error or ""} for e in self.entries]
        runs = len({e.run for e in self.entries})
        return "\n".join([wrap_prose(f"{self.path}: {len(self.entries)} line(s) of {runs} run(s)"
                                     f"{since}"), "",
                          table(rows, styles={"state": _state_style})])
