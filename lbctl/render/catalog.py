"""Every command's CSV/JSONL schema in one list, in the order the docs show them.

``python tests/docs_pages.py`` regenerates the reference page, docs/output-schemas.md (a test
keeps it equal to :data:`SCHEMAS`).
"""

from __future__ import annotations

from lbctl.render.apply_view import APPLY_SCHEMA, DRAIN_SCHEMA
from lbctl.render.assign_view import ASSIGN_SCHEMA
from lbctl.render.brokers_view import BROKERS_SCHEMA
from lbctl.render.doctor_view import DOCTOR_SCHEMA
from lbctl.render.fleet_view import INGEST_SCHEMA, REPORT_SCHEMA, WHATIF_SCHEMA
from lbctl.render.journal_view import JOURNAL_SCHEMA
from lbctl.render.monitor import MONITOR_SCHEMA
from lbctl.render.outcomes import OUTCOMES_SCHEMA
from lbctl.render.propose_view import PROPOSE_SCHEMA
from lbctl.render.schema import Schema, markdown
from lbctl.render.simulation_view import COMPARISON_SCHEMA, SIMULATION_SCHEMA
from lbctl.render.split_view import SPLIT_SCHEMA
from lbctl.render.views import (
    EXAMPLES_SCHEMA,
    EXPLAIN_SCHEMA,
    RECOMMEND_SCHEMA,
    VALIDATE_SCHEMA,
)

SCHEMAS: tuple[Schema, ...] = (
    RECOMMEND_SCHEMA, PROPOSE_SCHEMA, EXPLAIN_SCHEMA, SIMULATION_SCHEMA, COMPARISON_SCHEMA, MONITOR_SCHEMA,
    BROKERS_SCHEMA, SPLIT_SCHEMA, ASSIGN_SCHEMA, OUTCOMES_SCHEMA, JOURNAL_SCHEMA, VALIDATE_SCHEMA,
    EXAMPLES_SCHEMA, INGEST_SCHEMA, REPORT_SCHEMA, WHATIF_SCHEMA, APPLY_SCHEMA, DRAIN_SCHEMA,
    DOCTOR_SCHEMA,
)

if __name__ == "__main__":
    print(markdown(SCHEMAS))
