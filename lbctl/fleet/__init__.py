"""Fleet-wide offline analysis on Apache Spark: ingest snapshot histories, report, replay.

This package is the only place that imports pyspark, and only through :mod:`lbctl.fleet._compat`
inside the functions that run a job, so ``lbctl --help`` never loads Spark. Sessions come from one
factory (:mod:`lbctl.fleet.session`). What runs inside Spark tasks is lbctl's own code: snapshots
are parsed by :mod:`lbctl.sources.snapshot` (:mod:`lbctl.fleet.rows`) and histories are replayed
by :mod:`lbctl.loadmanager.select` (:mod:`lbctl.fleet.replay`); nothing is reimplemented for Spark.

Modules: ``files`` (inputs and the ingest manifest), ``rows`` (a snapshot as tidy rows),
``ingest``, ``report``, ``whatif`` (the three jobs), ``replay`` (one cluster's history through the
pure strategies), ``plots`` (PNG), ``progress`` (terminal progress), ``views`` (what the commands
print).
"""
