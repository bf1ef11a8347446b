"""Reasons in words: the sentences lbctl prints about what strategies and load managers decide.

Strategies, filters and the load managers return their decisions as data — a
:class:`~lbctl.model.decision.Why` record per reason, a code naming the situation and
the figures behind it. One module here per deciding module turns its records into today's
sentences (``threshold`` for ThresholdShedder, ``filters`` for the broker filters, ``cycle`` for
the load managers' own steps…), each registering its record types with :func:`words`. Words are
made when something is shown: a cycle formats nothing.

A words module is imported when a record of its module is first worded
(:data:`~lbctl.explain.words.base.HOMES` maps one to the other): a new deciding module adds its
words module and one line there.
"""

from __future__ import annotations

from lbctl.explain.words.base import text, words

__all__ = ["text", "words"]
