"""Did the move happen? Verification after each unload, transfer or split, bounded in time.

After an unload the bundle is owned by nobody until a lookup assigns it (Pulsar's
``NamespaceService.getBrokerServiceUrlAsync``: to the destination the unload named, else where the
leader's placement says). lbctl does what a reconnecting client does: it looks up a topic of the
bundle through the lookup v2 API (``GET /lookup/v2/topic/{domain}/{tenant}/{namespace}/{topic}``,
``TopicLookupBase``), following the broker's 307 to the owner, until the answer names an owner or
``--verify-timeout`` passes. The topic is one the live read found in the bundle, else a name lbctl
makes up that hashes into it (a lookup creates no topic; a cluster without
``allowAutoTopicCreation`` answers 404 for it, and then the owners' ``ownedNamespaces`` are asked
instead, which assign nothing). A bundle too narrow for a name to be found by a bounded search
(one hash wide: ~2^32 guesses) is verified by the ``ownedNamespaces`` listings from the start.

Outcomes: ``done`` (owned by the planned destination, or by any broker when the plan left the
choice to the next lookup), ``done-elsewhere`` (owned again, by another broker than planned),
``not-reassigned`` (nobody owns it when the time is up), ``not-moved`` (a 2xx answer, yet the
bundle is owned by its source still: nothing moved), ``failed`` (the request itself failed).
A split is ``done`` when the namespace's boundaries include the planned ones.
"""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from lbctl.admin.client import OWNED_NAMESPACES, AdminClient, call, lookup_call
from lbctl.admin.errors import AdminError
from lbctl.apply.planfile import PlannedAction

DONE, ELSEWHERE, NOT_REASSIGNED, FAILED = "done", "done-elsewhere", "not-reassigned", "failed"
NOT_MOVED = "not-moved"
#: names tried at most when looking for a made-up topic name that hashes into a bundle (about
#: 60 ms of CRC-32); a bundle so narrow that the search would likely need more is not searched
MAX_NAME_TRIES = 200_000
#: searched only when MAX_NAME_TRIES is this many times the expected number of tries (the search
#: then fails with probability e^-8)
_MARGIN = 8


@dataclass(frozen=True)
class Verified:
    outcome: str
    owner: str | None = None
    why: str = ""
    seconds: float = 0.0


def topic_in(bundle: str, known: Sequence[str]) -> str | None:
    """A topic that hashes into ``bundle``: the first known one, else a made-up
    ``persistent://tenant/ns/lbctl-verify-N`` — None for a bundle too narrow to find one in
    :data:`MAX_NAME_TRIES` (a one-hash-wide bundle would need ~2^32 guesses): the verifier then
    asks the owners' ``ownedNamespaces`` instead. Bundles are CRC-32 ranges of the topic name
    (Guava's ``Hashing.crc32``, ``ConsistentHashingTopicBundleAssigner``)."""
    if known:
        return known[0]
    ns, rng = bundle.rsplit("/", 1)
    lo, hi = (int(x, 16) for x in rng.split("_"))
    last = hi == 0xFFFFFFFF
    width = hi - lo + (1 if last else 0)
    if width <= 0 or width * MAX_NAME_TRIES < (1 << 32) * _MARGIN:
        return None
    prefix = f"persistent://{ns}/lbctl-verify-"
    for i in range(MAX_NAME_TRIES):
        name = prefix + str(i)
        h = zlib.crc32(name.encode()) & 0xFFFFFFFF
        if lo <= h < hi or (last and h == hi):
            return name
    return None


class BadLookup(ValueError):
    """A lookup answer whose URL cannot name a broker (a port out of range or not a number, an
    unclosed ``[``): said, and the bundle is then verified through the ownership listings."""


def owner_of(lookup: Any) -> str | None:
    """``host:port`` of a ``LookupData``'s ``httpUrl`` (or ``httpUrlTls``); :class:`BadLookup`
    when the URL it holds does not parse (``urlsplit`` raises on a bad port or bracket)."""
    if not isinstance(lookup, dict):
        return None
    from lbctl.safe.text import shorten

    for key in ("httpUrl", "httpUrlTls"):
        url = lookup.get(key)
        if isinstance(url, str) and url:
            try:
                parts = urlsplit(url)
                host, port = parts.hostname, parts.port
            except ValueError as e:
                raise BadLookup(f"the lookup answer's {key} {shorten(url, 120)!r} is not a broker "
                                f"URL ({e})") from None
            if host and port:
                return f"{host}:{port}"
    return None


def judge(a: PlannedAction, owner: str) -> Verified:
    if owner == a.broker:
        # the broker answered 2xx, yet the bundle is where it was: nothing moved (an unload the
        # broker ignored, or the next lookup gave it straight back)
        return Verified(NOT_MOVED, owner, f"the request succeeded but {a.bundle} is still on "
                                          f"{owner}: not moved")
    if a.destination is None or owner == a.destination:
        return Verified(DONE, owner)
    return Verified(ELSEWHERE, owner, f"owned by {owner}, not the planned {a.destination}")


class Verifier:
    """Polls until each moved bundle is owned again, or the timeout."""

    def __init__(self, client: AdminClient, *, timeout: float, poll: float = 0.25,
                 clock: Callable[[], float] = time.monotonic,
                 stop: threading.Event | None = None, cluster: str = "",
                 brokers: Callable[[], Sequence[str]] | None = None):
        self.client = client
        self.timeout = timeout
        self.poll = poll
        self.clock = clock
        self.stop = stop
        self.cluster = cluster
        self.brokers = brokers or (lambda: ())

    def moves(self, items: Sequence[tuple[PlannedAction, str | None]]) -> dict[int, Verified]:
        """``items``: (action, topic to look up) → step → verdict."""
        start = self.clock()
        pending = {a.step: (a, t) for a, t in items}
        out: dict[int, Verified] = {}
        last: dict[int, str] = {}
        bad: dict[int, str] = {}  # steps whose lookup answer did not parse
        use_owned = {s for s, (_, t) in pending.items() if t is None}
        while pending:
            by_lookup = [(s, a, t) for s, (a, t) in pending.items()
                         if s not in use_owned and t is not None]
            answers = self.client.gather([lookup_call(t) for _, _, t in by_lookup]) \
                if by_lookup else []
            for (s, a, _), ans in zip(by_lookup, answers, strict=True):
                if isinstance(ans, AdminError):
                    last[s] = str(ans)
                    if ans.status == 404:
                        use_owned.add(s)  # no auto-creation: ask the owners instead
                    continue
                try:
                    owner = owner_of(ans)
                except BadLookup as e:  # the request was sent: verify it another way
                    last[s] = bad[s] = str(e)
                    use_owned.add(s)
                    continue
                if owner is not None:
                    out[s] = judge(a, owner)
                else:
                    last[s] = "the lookup answer names no broker"
            owned_steps = [s for s in pending if s in use_owned and s not in out]
            if owned_steps:
                owners = self._owned()
                for s in owned_steps:
                    a = pending[s][0]
                    o = owners.get(a.bundle)
                    if o is not None:
                        v = judge(a, o)
                        if s in bad:  # a bad lookup answer on the way: said, not hidden
                            v = Verified(v.outcome, v.owner, "; ".join(
                                x for x in (v.why, f"by ownedNamespaces, as {bad[s]}") if x))
                        out[s] = v
                    else:
                        last.setdefault(s, "no broker lists it in ownedNamespaces")
            elapsed = self.clock() - start
            for s in list(pending):
                if s in out:
                    out[s] = Verified(out[s].outcome, out[s].owner, out[s].why, round(elapsed, 3))
                    del pending[s]
            if not pending:
                break
            if elapsed >= self.timeout:
                for s in pending:
                    why = f"nobody owns it after {self.timeout:g} s"
                    if last.get(s):
                        why += f" (last answer: {last[s]})"
                    out[s] = Verified(NOT_REASSIGNED, None, why, round(elapsed, 3))
                break
            self._wait(min(self.poll, max(0.0, self.timeout - elapsed)))
        return out

    def _wait(self, seconds: float) -> None:
        # a stop request does not cut verification short: the in-flight action finishes
        time.sleep(seconds)

    def _owned(self) -> dict[str, str]:
        """bundle → broker, from every active broker's ``ownedNamespaces``."""
        brokers = list(self.brokers())
        if not brokers or not self.cluster:
            return {}
        answers = self.client.gather([
            call(OWNED_NAMESPACES, base=self.client.broker_url(b), clusterName=self.cluster,
                 brokerId=b) for b in brokers])
        out: dict[str, str] = {}
        for b, ans in zip(brokers, answers, strict=True):
            if isinstance(ans, dict):
                for name in ans:
                    if isinstance(name, str):
                        out[name] = b
        return out

    def split(self, a: PlannedAction) -> Verified:
        """Done when the namespace's boundaries include every planned boundary."""
        start = self.clock()
        last = ""
        while True:
            try:
                data = self.client.bundles(a.namespace)
                bounds = data.get("boundaries") if isinstance(data, dict) else None
                have = {int(x, 16) for x in bounds or () if isinstance(x, str)}
                if set(a.boundaries) <= have:
                    return Verified(DONE, None, "", round(self.clock() - start, 3))
                last = "the namespace's boundaries do not include the planned ones yet"
            except (AdminError, ValueError) as e:
                last = str(e)
            elapsed = self.clock() - start
            if elapsed >= self.timeout:
                return Verified(FAILED, None, f"after {self.timeout:g} s: {last}", round(elapsed, 3))
            time.sleep(min(self.poll, max(0.0, self.timeout - elapsed)))


def owned_by(client: AdminClient, cluster: str, broker: str) -> list[str]:
    """The bundles ``broker`` owns (``GET /admin/v2/brokers/{cluster}/{broker}/ownedNamespaces``,
    answered by that broker), without its heartbeat and SLA-monitor namespaces, which never move."""
    from lbctl.model.bundle import is_system_service_namespace, namespace_of

    ans = client.json(call(OWNED_NAMESPACES, base=client.broker_url(broker), clusterName=cluster,
                           brokerId=broker))
    if not isinstance(ans, dict):
        from lbctl.admin.errors import HttpError

        raise HttpError(f"GET ownedNamespaces of {broker}: expected a JSON object")
    return sorted(b for b in ans if isinstance(b, str) and b.count("/") >= 2
                  and not is_system_service_namespace(namespace_of(b)))
