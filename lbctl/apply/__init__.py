"""Carrying out plans on a live cluster: ``lbctl apply`` (:mod:`.runner`), with re-validation
(:mod:`.validate`), verification (:mod:`.verify`), the journal read back for resume
(:mod:`.journal`), a per-cluster lock (:mod:`.lock`), rollback plans (:mod:`.rollback`), and the
balancer pause of ``lbctl drain`` (:mod:`.balancer`, :mod:`.drain`).

It sits above the executor and the load managers: every request still goes through
:class:`lbctl.executor.Executor` (shown, confirmed, journaled, never twice by accident); the plans
of ``drain`` and ``rebalance-after`` come from :mod:`lbctl.loadmanager.drain`.
"""
