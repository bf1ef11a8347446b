"""What a change sent (or would have sent): one row per request (``unload``, ``split-bundle``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from lbctl.render.schema import Schema, col

if TYPE_CHECKING:
    from lbctl.executor import Outcome

OUTCOMES_SCHEMA = Schema("unload / split-bundle", "request", (
    col("action", "string", "what the request does, in words"),
    col("request", "string", "the request as sent: method, URL (credentials redacted), body"),
    col("state", "string", "dry-run, done, failed or not sent"),
    col("status", "integer", "the HTTP status of the answer (empty when not sent)"),
    col("error", "string", "the error, when it failed"),
))


class OutcomesView:
    """What was sent (or would have been), one row per request."""

    schema: ClassVar[Schema] = OUTCOMES_SCHEMA

    def __init__(self, outcomes: Sequence[Outcome]):
        self.outcomes = outcomes

    def to_data(self) -> Any:
        return {"requests": [o.to_dict() for o in self.outcomes]}

    def to_rows(self) -> list[dict[str, Any]]:
        return [o.to_dict() for o in self.outcomes]

    def to_text(self) -> str:
        return "\n".join(f"{o.state}: {o.mutation.summary}"
                         + (f" (HTTP {o.status})" if o.status else "") for o in self.outcomes)
