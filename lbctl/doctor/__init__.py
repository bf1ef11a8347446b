"""``lbctl doctor``: the load-balancing traps in a cluster's configuration and state.

Each trap is a :class:`~lbctl.doctor.base.Rule` in its own module under
:mod:`lbctl.doctor.rules`, registered by id in :data:`~lbctl.doctor.base.RULES`;
:mod:`lbctl.doctor.builtin` imports every module of that package, so a new rule is its module and
its test. :func:`~lbctl.doctor.run.diagnose` runs them all over a
:class:`~lbctl.doctor.context.Context` (the settings as the modelled Pulsar release resolves them,
the state, and what a live read adds: the dynamic configuration, each broker's version and load
manager) and returns a :class:`~lbctl.doctor.base.Report`.

The package sits beside the load managers (it may run them or their placement filters) and below
the renderers.
"""
