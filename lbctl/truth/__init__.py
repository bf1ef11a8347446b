"""A cluster's hardware as a *truth* model — deliberately not lbctl's planning model.

lbctl's planner predicts a broker's usage with :mod:`lbctl.model.loadmodel`, calibrated from load
reports. A check of those predictions is only worth something against a cluster whose usage comes
from somewhere else: the loopback sandbox and ``simulate``/``compare`` compute each broker's
reported usage here, from the traffic of the bundles it owns and its host's hardware, and lbctl's
model must learn it from the reports, as it would on a real cluster.
"""
