"""Fleet-wide offline analysis on Apache Spark: ingest snapshot histories, report, replay.

This package is the only place that imports pyspark, and only through :mod:`lbctl.fleet._compat`
inside the functions that run a job, so ``lbctl --help`` never loads Spark. Sessions come from one
factory (:mod:`lbctl.fleet.session`). Ingest and report are native Spark: snapshot JSON is decoded
by Spark's JSON reader and checked by SQL predicates that restate lbctl's validation rules
(:mod:`lbctl.fleet.native`); every file those are not sure of goes to lbctl's own reader
(:mod:`lbctl.fleet.rows`), which stays the reference (tests compare the two). Histories are
replayed by :mod:`lbctl.loadmanager.select` (:mod:`lbctl.fleet.replay`): the strategies are never
reimplemented for Spark.

Modules: ``files`` (inputs and the ingest manifest), ``native`` (schema, reading, checks),
``native_tables`` (the tables' rows from native lines), ``sections`` (``config`` and
``namespaces`` checked once per distinct value), ``rows`` (a snapshot as rows, by lbctl's reader),
``isolate`` (lbctl's reader in a child process, for YAML), ``commit`` (staging, publishing,
recovery, the lock), ``ingest``, ``report``, ``whatif`` (the three jobs), ``replay`` (one
cluster's history through the pure strategies), ``plots`` (PNG), ``progress`` (terminal
progress).
"""
