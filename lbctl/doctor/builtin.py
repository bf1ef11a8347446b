"""The built-in rules, imported once so that they register themselves; import :data:`RULES` from
here. Every module of :mod:`lbctl.doctor.rules` is imported (the package is walked, so a new rule
module needs no line anywhere else)."""

from __future__ import annotations

import importlib
import pkgutil

from lbctl.doctor import rules
from lbctl.doctor.base import RULES

for _module in pkgutil.iter_modules(rules.__path__, rules.__name__ + "."):
    importlib.import_module(_module.name)

__all__ = ["RULES"]
