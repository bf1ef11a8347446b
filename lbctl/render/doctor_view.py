"""``lbctl doctor``: the findings, worst first, each with what was found, why and the fix."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from lbctl.doctor.base import Report, Severity
from lbctl.render.display import paint
from lbctl.render.schema import Schema, col
from lbctl.render.tables import wrap_prose
from lbctl.safe.text import name_safe

DOCTOR_SCHEMA = Schema("doctor", "finding", (
    col("cluster", "string", "the cluster"),
    col("rule", "string", "the rule's id (docs/doctor.md)"),
    col("severity", "string", "error, warning or info"),
    col("found", "string", "what was found, with the cluster's numbers"),
    col("why", "string", "why it matters, citing the Pulsar PR, issue or PIP"),
    col("fix", "string", "the setting to change or the command that fixes it"),
    col("source", "string", "the Pulsar PR, issue, PIP or class the rule follows"),
    col("brokers", "list", "the brokers concerned"),
    col("namespaces", "list", "the namespaces concerned"),
    col("bundles", "list", "the bundles concerned"),
    col("settings", "list", "the settings concerned"),
))

_STYLE = {Severity.ERROR: "failure", Severity.WARNING: "skip", Severity.INFO: None}


@dataclass(frozen=True)
class DoctorView:
    report: Report
    schema: ClassVar[Schema] = DOCTOR_SCHEMA

    def to_data(self) -> Any:
        return self.report.to_dict()

    def to_rows(self) -> list[dict[str, Any]]:
        return [{"cluster": self.report.cluster, **f.to_dict()} for f in self.report.findings]

    def to_text(self) -> str:
        r = self.report
        counts = ", ".join(f"{r.count(s)} {s.value}{'s' if r.count(s) != 1 and s != Severity.INFO else ''}"
                           for s in Severity)
        head = (f"{name_safe(r.cluster)}: {r.brokers} broker(s), {r.load_manager} load manager, "
                f"modelled as "
                f"Pulsar {r.pulsar_version}; {r.rules_run} rule{'' if r.rules_run == 1 else 's'}: "
                f"{counts}")
        parts = [wrap_prose(head)]
        parts += [wrap_prose(f"note: {name_safe(n)}") for n in r.notes]  # one line each
        if not r.findings:
            parts += ["", "no finding: none of the known load-balancing traps applies"]
        for f in r.findings:
            label = paint(f"{f.severity.value.upper():<7}", _STYLE[f.severity])
            parts += ["", f"{label} {f.rule}",
                      wrap_prose(f"  found: {name_safe(f.found)}", hang=9),
                      wrap_prose(f"  why:   {name_safe(f.why)}", hang=9),
                      wrap_prose(f"  fix:   {name_safe(f.fix)}", hang=9)]
        parts += ["", f"exit status {int(r.status)} ({r.status.description})"]
        return "\n".join(parts)
