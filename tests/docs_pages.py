"""The documentation pages generated from the code, and their generator.

``python tests/docs_pages.py`` rewrites them; ``tests/test_docs.py`` fails when one is stale:

* ``docs/exit-codes.md`` from :class:`lbctl.errors.ExitStatus`;
* ``docs/settings.md`` from :data:`lbctl.config.SETTINGS`;
* ``docs/output-schemas.md`` from the views' CSV/JSONL schemas (:mod:`lbctl.render.catalog`);
* ``docs/doctor.md`` from the doctor rules (:data:`lbctl.doctor.builtin.RULES`).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def exit_codes() -> str:
    from lbctl.errors import DoctorStatus, ExitStatus

    lines = ["# Exit codes", "",
             "<!-- generated from lbctl.errors.ExitStatus: python tests/docs_pages.py -->", "",
             "Every error is one line on stderr, `lbctl: error: …`, and the exit code says which",
             "kind it was (`lbctl --help` lists them too). Click's own usage errors (an unknown",
             "option, a missing argument) read alike, `lbctl: error: No such option: --x (try",
             "'lbctl recommend -h')`, and exit with 2. A failed request names its method, URL and",
             "Pulsar's `reason`: `lbctl: error: GET http://…/admin/v2/…: 500 Internal Server",
             "Error: <reason>`. A command given no snapshot reads the live cluster and says so:",
             "`lbctl: no snapshot given: reading the live cluster at URL`.", "",
             "| code | name | meaning |", "|---|---|---|"]
    lines += [f"| {int(s)} | `{s.name}` | {_cell(s.description)} |" for s in ExitStatus]
    lines += ["", "## Commands that change a cluster: no terminal, no `--yes`", "",
              "`unload`, `split-bundle` (live), `apply`, `drain` (and `drain --fill`,",
              "`drain --restore`) follow one rule. Each first shows what it would send. Then:", "",
              "* `--dry-run`: nothing is sent; exit 0.",
              "* on a terminal without `--yes`: lbctl asks; answered no, nothing is sent; exit 12.",
              "* no terminal (a CI job, a pipe) and no `--yes`: nothing is sent, and lbctl exits",
              "  12 (`NOT_CONFIRMED`) with one line, the same for every command:",
              "  `lbctl: error: refusing to change the cluster without confirmation: not a",
              "  terminal; pass --yes to send, or --dry-run to only show the requests`.",
              "* `--yes`: sent without a question.",
              "* `unload` and `split-bundle` of a request the journal says was sent within",
              "  `loadBalancerSheddingGracePeriodMinutes`: nothing is sent, exit 12, even with",
              "  `--yes` (`--force` sends it again); `apply` skips such an action instead.", "",
              "A script that only wants to look passes `--dry-run` and can rely on 0; a script",
              "that forgot `--yes` fails loudly instead of passing without a change.", "",
              "## The same failure, the same code", "",
              "* An unknown namespace, bundle or broker named on the line exits 2 (`USAGE`),",
              "  whether a snapshot or the live cluster says it does not exist (`explain",
              "  --bundle`, `split-bundle`, `unload`, `drain`, `rebalance-after`), with the",
              "  closest name when there is one.",
              "* A missing optional extra exits 2 and names the `pip install` that adds it",
              "  (`--plot` without matplotlib, `fleet` without pyspark/pandas/pyarrow, lbctl's",
              "  planner — `propose`, `--strategy lbctl`, `watch --heal` — without numpy),",
              "  before any work. Java missing for Spark is not an extra: exit 1.",
              "* A 404 (7) is only an HTTP answer about something lbctl did not check first."]
    lines += ["", "## `lbctl doctor`", "",
              "`lbctl doctor` exits with its findings' worst severity when it examined the cluster,",
              "as linters do: 1 and 2 then mean *warnings* and *errors found*, not a failure of",
              "lbctl. A doctor run that could not examine the cluster (unreadable file, bad flag,",
              "cluster unreachable) exits with the codes above and prints `lbctl: error: …` and",
              "no report; one that examined it always prints the report (`-o json`: `status`).",
              "Codes 3 and above only ever mean a failure.", ""]
    lines += [f"* `{int(s)}` (`{s.name}`): {s.description}" for s in DoctorStatus]
    return "\n".join(lines) + "\n"


def _default(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return ", ".join(str(v) for v in value) or "(empty)"
    if value == "":
        return "(empty)"
    return str(value)


def settings() -> str:
    from lbctl.config import SETTINGS
    from lbctl.versions import DEFAULT

    lines = ["# Settings lbctl reads", "",
             "<!-- generated from lbctl.config.SETTINGS: python tests/docs_pages.py -->", "",
             "Each setting is a field of Pulsar's `ServiceConfiguration`, with Pulsar's name, Java",
             "type and default. A value is resolved with this precedence, highest first:", "",
             "1. `--set key=value` (repeatable);",
             "2. the snapshot's `dynamicConfig`: a *dynamic* setting stored with `pulsar-admin",
             "   brokers update-dynamic-config` (the broker applies it over its `broker.conf`,",
             "   `BrokerService`; a live read captures them);",
             "3. `--broker-conf FILE` (a `broker.conf`; keys lbctl does not know are ignored);",
             "4. the snapshot's `config` (a live read keeps only these keys from the runtime",
             "   configuration);",
             "5. the default of the Pulsar release modelled ([versions](versions.md)); the",
             f"   column below is the default release's, {DEFAULT}: "
             "`loadBalancerMemoryResourceWeight` and",
             "   `loadBalancerDirectMemoryResourceWeight` were 1.0 in older releases.", "",
             "An unknown `--set` key is an error that suggests the closest name. Every plan lists",
             "the settings its computation read, with their values (`settings` in plan@1).", "",
             "*valid*: the range in which Pulsar's code gives the setting its meaning (Pulsar",
             "itself accepts any number; `lbctl doctor` reports a value outside it); *dynamic*:",
             "`pulsar-admin brokers update-dynamic-config` changes it without a restart.", "",
             "| setting | type | default | unit | valid | dynamic | what it does |",
             "|---|---|---|---|---|---|---|"]
    for s in SETTINGS:
        doc = s.doc + (f" Deprecated: use `{s.deprecated_by}`." if s.deprecated_by else "")
        lines.append(f"| `{s.name}` | {s.type} | `{_cell(_default(s.default))}` | "
                     f"{_cell(s.unit) or ''} | {_cell(s.valid) if s.valid else ''} | "
                     f"{'yes' if s.dynamic else ''} | {_cell(doc)} |")
    return "\n".join(lines) + "\n"


def output_schemas() -> str:
    from lbctl.render.catalog import SCHEMAS
    from lbctl.render.schema import markdown

    return markdown(SCHEMAS) + "\n"


def doctor() -> str:
    import sys

    from lbctl.doctor.builtin import RULES

    lines = ["# Doctor rules", "",
             "<!-- generated from lbctl.doctor.builtin.RULES: python tests/docs_pages.py -->", "",
             "`lbctl doctor` ([the command](commands/doctor.md)) runs every rule below over a",
             "cluster's settings (as the modelled Pulsar release resolves them: `--set` >",
             "`--broker-conf` > the snapshot's or runtime configuration > the release's defaults)",
             "and state. Each finding names its rule, a severity, what was found with the",
             "cluster's numbers, why it matters and the fix. The severity below is the rule's",
             "usual one; a finding may be milder or worse (each rule's section says when).",
             "Exit status: 0 no finding or info only, 1 warnings, 2 errors",
             "([exit codes](exit-codes.md)).", "",
             "| rule | severity | source | what it finds |", "|---|---|---|---|"]
    lines += [f"| [`{r.id}`](#{r.id}) | {r.severity.value} | {_cell(r.source)} | {_cell(r.title)} |"
              for r in RULES]
    for r in RULES:
        doc = " ".join((sys.modules[r.check.__module__].__doc__ or "").split())
        doc = re.sub(r":[a-z]+:(`[^`]+`)", r"\1", doc)  # Sphinx roles read as text in Markdown
        lines += ["", f"## {r.id}", "", f"**{r.severity.value}** — {r.title}. Source: {r.source}.",
                  "", f"*Why:* {r.why}", "", f"*Fix:* {r.fix}", "", f"*Details:* {doc}"]
    return "\n".join(lines) + "\n"


PAGES = {"exit-codes.md": exit_codes, "settings.md": settings,
         "output-schemas.md": output_schemas, "doctor.md": doctor}

if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(ROOT))
    for name, make in PAGES.items():
        (DOCS / name).write_text(make())
        print(f"wrote docs/{name}")
