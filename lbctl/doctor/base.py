"""What a doctor rule is, what it finds, and the registry of rules by id."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from lbctl.errors import DoctorStatus

if TYPE_CHECKING:
    from lbctl.doctor.context import Context


class Severity(StrEnum):
    """How bad a finding is: ``error`` (the load balancer cannot do its job, or does something
    else than configured), ``warning`` (a known trap that will bite), ``info`` (worth knowing)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 2, "warning": 1, "info": 0}[self.value]


@dataclass(frozen=True)
class Finding:
    """One trap found: which rule, how bad, what was found (with the numbers), why it matters (one
    sentence citing Pulsar's PR, issue or PIP), and the fix (the exact setting, or the lbctl or
    pulsar-admin command)."""

    rule: str
    severity: Severity
    found: str
    why: str
    fix: str
    source: str
    brokers: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    bundles: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity.value, "found": self.found,
                "why": self.why, "fix": self.fix, "source": self.source,
                "brokers": list(self.brokers), "namespaces": list(self.namespaces),
                "bundles": list(self.bundles), "settings": list(self.settings)}


Check = Callable[["Context", "Rule"], Iterable[Finding]]


@dataclass(frozen=True)
class Rule:
    """A check registered by ``id``: its usual ``severity`` (a finding may be milder or worse),
    what it looks for (``title``), the Pulsar source it follows, why it matters and the usual fix
    (the docs list these; findings repeat them with the cluster's numbers)."""

    id: str
    severity: Severity
    title: str
    source: str
    why: str
    fix: str
    check: Check = field(repr=False, compare=False)

    def finding(self, found: str, *, severity: Severity | None = None, why: str | None = None,
                fix: str | None = None, source: str | None = None,
                brokers: Iterable[str] = (), namespaces: Iterable[str] = (),
                bundles: Iterable[str] = (), settings: Iterable[str] = ()) -> Finding:
        return Finding(self.id, severity or self.severity, found, why or self.why,
                       fix or self.fix, source or self.source, tuple(brokers),
                       tuple(namespaces), tuple(bundles), tuple(settings))


class Rules:
    """The registry: rules by id, in registration order (the built-ins register themselves when
    :mod:`lbctl.doctor.builtin` imports them)."""

    def __init__(self) -> None:
        self._rules: dict[str, Rule] = {}

    def register(self, id: str, severity: Severity, *, title: str, source: str, why: str,
                 fix: str) -> Callable[[Check], Rule]:
        def deco(check: Check) -> Rule:
            if id in self._rules:
                raise ValueError(f"doctor rule {id!r} registered twice")
            rule = Rule(id, severity, title, source, why, fix, check)
            self._rules[id] = rule
            return rule

        return deco

    def __iter__(self) -> Iterator[Rule]:
        return iter(sorted(self._rules.values(), key=lambda r: r.id))

    def __len__(self) -> int:
        return len(self._rules)

    def __getitem__(self, id: str) -> Rule:
        return self._rules[id]

    def ids(self) -> list[str]:
        return [r.id for r in self]


RULES = Rules()
rule = RULES.register


@dataclass(frozen=True)
class Report:
    """What doctor found in one cluster: the findings, worst first, and the exit status."""

    cluster: str
    source: str
    pulsar_version: str
    load_manager: str
    brokers: int
    findings: tuple[Finding, ...]
    rules_run: int
    notes: tuple[str, ...] = ()

    @property
    def status(self) -> DoctorStatus:
        worst = max((f.severity.rank for f in self.findings), default=0)
        return DoctorStatus(worst)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity == severity)

    def to_dict(self) -> dict[str, Any]:
        return {"format": "lbctl/doctor@1", "cluster": self.cluster, "source": self.source,
                "pulsarVersion": self.pulsar_version, "loadManager": self.load_manager,
                "brokers": self.brokers, "rulesRun": self.rules_run,
                "status": int(self.status),
                "summary": {s.value: self.count(s) for s in Severity},
                "findings": [f.to_dict() for f in self.findings],
                "notes": list(self.notes)}
