"""``lbctl brokers``: the active brokers, their version and load manager, and the leader."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.render import table
from lbctl.render.display import current
from lbctl.render.names import BrokerNames
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.safe.text import name_safe
from lbctl.sources.live_brokers import BrokerList

BROKERS_SCHEMA = Schema("brokers", "active broker", (
    col("cluster", "string", "the cluster"),
    col("broker", "string", "the broker id (host:port of its web service)"),
    col("leader", "boolean", "whether it is the leader (the broker whose load manager sheds)"),
    col("answered", "boolean", "whether it answered both requests"),
    col("version", "string", "its Pulsar version"),
    col("loadManager", "string", "its loadManagerClassName, fully qualified"),
    col("error", "string", "why it did not answer"),
))


def short_class(name: str | None) -> str:
    """``ModularLoadManagerImpl`` for ``org.apache.….impl.ModularLoadManagerImpl``."""
    return name.rsplit(".", 1)[-1] if name else "-"


@dataclass(frozen=True)
class BrokersView:
    brokers: BrokerList
    leader_only: bool = False
    schema: ClassVar[Schema] = BROKERS_SCHEMA

    def to_data(self) -> Any:
        b = self.brokers
        if self.leader_only:
            return {"cluster": b.cluster, "leader": b.leader}
        return {"cluster": b.cluster, "leader": b.leader,
                "brokers": [x.to_dict() for x in b.brokers]}

    def to_rows(self) -> list[dict[str, Any]]:
        b = self.brokers
        shown = [x for x in b.brokers if x.leader] if self.leader_only else list(b.brokers)
        return [{"cluster": b.cluster, **x.to_dict()} for x in shown]

    def to_text(self) -> str:
        b = self.brokers
        if self.leader_only:
            return b.leader or "-"
        names = BrokerNames.of([x.broker for x in b.brokers], wide=current().wide)
        rows = [{"broker": names(x.broker), "leader": "leader" if x.leader else "",
                 "answered": "yes" if x.answered else "no", "version": x.version or "-",
                 "load manager": short_class(x.load_manager),
                 "error": names.text(x.error or "")} for x in b.brokers]
        answered = sum(x.answered for x in b.brokers)
        lead = names(b.leader) if b.leader else f"none ({b.leader_error or 'not elected'})"
        parts = [wrap_prose(f"{name_safe(b.cluster)}: {len(b.brokers)} active broker(s), {answered} "
                            f"answered; leader {lead}"), "",
                 table(rows, styles={"answered": lambda t: None if t == "yes" else "failure"})]
        if b.leader and b.leader not in {x.broker for x in b.brokers}:
            parts += ["", wrap_prose(f"the leader {b.leader} is not in the active broker list")]
        note = names.note()
        if note:
            parts += ["", wrap_prose(note)]
        return "\n".join(parts)
