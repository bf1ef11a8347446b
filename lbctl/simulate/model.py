"""The simulator's load model lives in :mod:`lbctl.model.loadmodel`, shared with lbctl's planner.

Kept as an alias so that ``lbctl.simulate.model`` (imported before the move) goes on working.
"""

from lbctl.model.loadmodel import MODELLED, Drivers, Fit, LoadModel

__all__ = ["MODELLED", "Drivers", "Fit", "LoadModel"]
