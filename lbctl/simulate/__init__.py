"""Closed-loop simulation of the modular load manager (``lbctl simulate`` / ``lbctl compare``).

:mod:`lbctl.model.loadmodel` predicts broker load from carried bundles (shared with lbctl's
planner, :mod:`lbctl.planner`),
:mod:`~lbctl.simulate.reports` decides which reports the leader sees,
:mod:`~lbctl.simulate.engine` runs the loop through :class:`lbctl.loadmanager.modular.ModularLoadManager`,
:mod:`~lbctl.simulate.metrics` measures it, :mod:`~lbctl.simulate.compare` runs several strategies
on the same start and trace, and :mod:`~lbctl.simulate.plot` draws PNGs (matplotlib, lazily).
"""
