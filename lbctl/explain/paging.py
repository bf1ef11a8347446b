"""``explain --page N --limit L``: a long list of an explanation written a page at a time.

A whole-cycle explanation already says what changed rather than everything (a broker's skipped
bundles counted by reason, a placement's brokers cut to counts and the best scores: see
:data:`lbctl.explain.modular.LIST_LIMIT`), but some lists grow with the cycle itself: one broker
shedding 24,000 of 200,000 bundles has 24,000 unloads, each with its placement (issue 30: 55 MB
of JSON), and a cluster of 10,000 brokers has 10,000 broker rows. Each such list — the plan's
actions and brokers, the candidates and unloads, the extensible load manager's brokers, rounds,
decisions and splits — is written :attr:`Pager.limit` items at a time: page ``N`` holds items
``(N-1)·L … N·L-1`` of every list longer than ``L``; a list of ``L`` or fewer is written whole on
every page, so a small cluster's explanation is never paged. The output says so (``page`` in the
JSON, a last paragraph in the text) with every paged list's length. ``--limit 0`` writes every
list whole (as before, possibly hundreds of megabytes).

A pager is made per command run and collects, as the explanation is built, the length of each
list it cut; the view then checks that the page asked for exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from lbctl.errors import UsageError

T = TypeVar("T")

#: items of a long list on a page (``--limit``); issue 30's bound is 5 MB of JSON at 200,000
#: bundles, and a cut unload with its placement and action is about 1.5 kB
DEFAULT_LIMIT = 100


class Pager:
    """Page ``number`` (from 1) of ``limit`` items (0: no paging); the lists it cut so far.
    ``full_profile`` (``explain --profile``): the Pulsar profile whole, not cut to what bore on
    the cycle (:mod:`lbctl.explain.profile`) — another "how much to show" of the same run."""

    def __init__(self, number: int = 1, limit: int = DEFAULT_LIMIT, full_profile: bool = False):
        if number < 1:
            raise UsageError(f"--page must be 1 or more, got {number}")
        if limit < 0:
            raise UsageError(f"--limit must be 0 (no paging) or more, got {limit}")
        self.number = number
        self.limit = limit
        self.full_profile = full_profile
        #: each paged list's name (its JSON path) and length (the longest, over several cycles)
        self.totals: dict[str, int] = {}

    def take(self, name: str, items: Sequence[T]) -> Sequence[T]:
        """``items`` itself when it fits a page (or paging is off), else this page's slice —
        and ``name``'s length remembered."""
        limit = self.limit
        if not limit or len(items) <= limit:
            return items
        self.totals[name] = max(self.totals.get(name, 0), len(items))
        start = (self.number - 1) * limit
        return items[start:start + limit]

    @property
    def pages(self) -> int:
        """How many pages the longest list fills (1 when nothing was paged)."""
        if not self.totals:
            return 1
        return -(-max(self.totals.values()) // self.limit)

    def check(self) -> None:
        """A page past the last is a usage error (after the explanation was built)."""
        if self.number > self.pages:
            raise UsageError(f"--page {self.number}: the explanation has {self.pages} page(s) "
                             f"of {self.limit} (--limit)")

    def to_dict(self) -> dict[str, Any] | None:
        """``page`` in the JSON: only when a list was paged."""
        if not self.totals:
            return None
        return {"number": self.number, "limit": self.limit, "pages": self.pages,
                "lists": dict(self.totals)}

    def text(self) -> str | None:
        """The text's closing paragraph: only when a list was paged."""
        if not self.totals:
            return None
        sizes = ", ".join(f"{name} {n:,}" for name, n in self.totals.items())
        following = (f"--page {self.number + 1} for the next, " if self.number < self.pages
                     else "")
        return (f"Page {self.number} of {self.pages}: lists longer than {self.limit} show "
                f"{self.limit} items a page ({sizes}); {following}--limit 0 for every item.")


#: the pager of the explanations built outside ``lbctl explain`` (tests, ``--watch``): no paging
WHOLE = Pager(1, 0)
