"""Reasons in words: every sentence lbctl prints about a decision is made here.

Strategies, filters and the load managers return their decisions as data — a
:class:`~lbctl.model.decision.Why` record per reason, a ``StrEnum`` code naming the situation and
the figures behind it. One module here per deciding module turns its records into today's
sentences (``threshold`` for ThresholdShedder, ``filters`` for the broker filters, ``cycle`` for
the load managers' own steps…), each registering its record types with :func:`words`. Words are
made when something is shown: a cycle formats nothing.

Every module of the package is imported here, so a new one needs no line anywhere else.
"""

from __future__ import annotations

import importlib
import pkgutil

from lbctl.explain.words.base import memo_text, text, words

for _module in pkgutil.iter_modules(__path__, __name__ + "."):
    importlib.import_module(_module.name)

__all__ = ["memo_text", "text", "words"]
