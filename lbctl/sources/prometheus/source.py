"""A Prometheus range as a :class:`~lbctl.sources.base.StateSource`: the sequence
:func:`~lbctl.sources.prometheus.output.read_history` rebuilds, one snapshot per step, with the
report's gaps and warnings as the read's warnings; or written to a ``.jsonl`` (:meth:`write`,
``snapshot from-prometheus`` and ``fleet ingest``).

The reference (bundle boundaries and settings, needed when only per-topic metrics are exported)
is itself a source — a snapshot file, or the live cluster — read when the range is, before
Prometheus is asked.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from msgspec import Struct

from lbctl.records import replace
from lbctl.sources.base import Progress, StateRead, StateSource

if TYPE_CHECKING:
    from lbctl.admin.prometheus import PrometheusClient
    from lbctl.sources.prometheus.request import HistoryRequest, Report


class PrometheusRange(Struct, frozen=True):
    """``request``'s time range, step and cluster, read from the Prometheus ``connect`` opens."""

    connect: Callable[[], AbstractContextManager[PrometheusClient]]
    request: HistoryRequest
    reference: StateSource | None = None
    reference_name: str = ""  # how the reference was given: a file name, or "live"

    @property
    def live(self) -> bool:
        return False

    @property
    def what(self) -> str:
        return "Prometheus"

    def _request(self) -> tuple[HistoryRequest, StateRead | None]:
        """The request with its reference read (and that read, whose lines are reported too)."""
        if self.reference is None:
            return self.request, None
        from lbctl.sources.prometheus.output import reference_from

        got = self.reference.read()
        return replace(self.request, reference=reference_from(got.states, self.reference_name)), got

    def read(self, progress: Progress | None = None) -> StateRead:
        from lbctl.sources.prometheus.output import read_history

        req, ref = self._request()
        with self.connect() as client:
            states, report = read_history(client, req, progress)
        return StateRead(states, ref.failures if ref else (),
                         (*(ref.warnings if ref else ()), *report.lines()))

    def write(self, path: str, progress: Progress | None = None) -> Report:
        """The range as a ``.jsonl`` file (optionally ``.gz``), written atomically; the
        reference's lines lead the report's warnings."""
        from lbctl.sources.prometheus.output import write_history

        req, ref = self._request()
        with self.connect() as client:
            report = write_history(client, req, path, progress)
        if ref is not None:
            report.warnings[:0] = ref.report
        return report
