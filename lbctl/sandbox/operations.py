"""What the loopback test cluster needs to carry out plans (``apply``, ``drain``): lookups and
ownership after an unload, dynamic configuration, a broker going away, a failure on a chosen
request. Kept apart from :mod:`lbctl.sandbox.server`, which mixes :class:`OperationsMixin` in.

* **Lookup** (``GET /lookup/v2/topic/{domain}/{tenant}/{namespace}/{topic}``, Pulsar's
  ``TopicLookupBase``): the owner's ``LookupData`` (``brokerUrl``, ``httpUrl``, …). A broker that
  does not own the topic's bundle answers ``307`` to the owner's lookup URL with
  ``authoritative=true``; a bundle nobody owns is assigned at the lookup, as the leader would (to
  the destination of its unload, else the next broker). 404 for an unknown namespace.
* **Ownership after an unload** (:meth:`OperationsMixin.set_reassignment`, off by default: then an
  unload moves ownership at once, as before): the bundle is owned by nobody for ``delay`` seconds;
  a lookup in that time answers ``503`` ("no broker available", as a broker busy assigning does);
  after it the bundle goes to the unload's destination (else the next broker) — or, for the bundles
  ``elsewhere`` names (or every ``elsewhere_every``-th unload), to another broker than the one
  asked for, as happens when the destination turns unavailable. Any request settles assignments
  whose delay has passed (clients reconnecting).
* **Ownership per broker**: ``GET /admin/v2/brokers/{cluster}/{brokerId}/ownedNamespaces``
  (``BrokersBase.getOwnedNamespaces``), answered by that broker itself (others redirect), with the
  broker's heartbeat namespace as Pulsar lists it.
* **Dynamic configuration** (``BrokersBase``): ``GET /brokers/configuration`` (the names that can
  be updated), ``GET /brokers/configuration/values`` (the overrides), ``POST
  /brokers/configuration/{name}/{value}`` (412 for a name that is not dynamic or a value that does
  not parse), ``DELETE /brokers/configuration/{name}``; the runtime configuration shows the
  overrides.
* **A broker going away** (:meth:`OperationsMixin.remove_broker`): it stops listening, leaves the
  broker list, and its bundles go to the others.
* **Failure on a chosen request** (:class:`NthFault`): answer the n-th matching request (counted
  from 1) with a status — 409, 412, 500 … — leaving the others alone.
* **Hooks**: :attr:`OperationsMixin.after_mutation` callables run after each mutation is served
  (a test turns a broker overloaded, or kills one, mid-run).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Answer = tuple[int, bytes, str, dict[str, str]]

#: dynamic settings the test cluster accepts (a subset of Pulsar's ``@FieldContext(dynamic=true)``
#: load-balancer settings; every one of them is dynamic in Pulsar — not
#: ``loadBalancerLoadPlacementStrategy``, which ``ServiceConfiguration`` declares without
#: ``dynamic``, so Pulsar answers 412 to its update)
DYNAMIC_SETTINGS = (
    "loadBalancerSheddingEnabled", "loadBalancerAutoBundleSplitEnabled",
    "loadBalancerAutoUnloadSplitBundlesEnabled", "loadBalancerSheddingIntervalMinutes",
    "loadBalancerSheddingGracePeriodMinutes", "loadBalancerBrokerOverloadedThresholdPercentage",
    "loadBalancerBrokerThresholdShedderPercentage", "loadBalancerNamespaceMaximumBundles",
    "loadBalancerLoadSheddingStrategy",
)
_BOOLEAN = {"loadBalancerSheddingEnabled", "loadBalancerAutoBundleSplitEnabled",
            "loadBalancerAutoUnloadSplitBundlesEnabled"}


@dataclass
class NthFault:
    """Answer the ``nth`` request (1-based) matching ``method`` and ``path`` (a regex) with
    ``status`` and ``{"reason": reason}``; every other request is served normally."""

    path: str
    nth: int = 1
    status: int = 500
    reason: str = "Internal error"
    method: str | None = "PUT"
    seen: int = 0

    def hit(self, method: str, path: str) -> bool:
        if (self.method is not None and method != self.method) or not re.search(self.path, path):
            return False
        self.seen += 1
        return self.seen == self.nth


@dataclass
class Pending:
    """A bundle unloaded and not yet owned again."""

    destination: str | None
    ready_at: float
    elsewhere: bool


@dataclass
class Reassignment:
    """How ownership comes back after an unload (see the module docstring)."""

    delay: float = 0.0
    elsewhere: set[str] = field(default_factory=set)
    elsewhere_every: int | None = None
    unloads: int = 0


class OperationsMixin:
    """Lookups, deferred ownership, dynamic configuration, broker removal and chosen faults."""

    # provided by TestCluster
    cluster: str
    brokers: dict[str, Any]
    owners: dict[str, str]
    namespaces: dict[str, list[int]]
    config: dict[str, str]
    stats: dict[str, dict[str, float]]
    _lock: Any
    _servers: list[Any]
    _port_broker: dict[int, str]
    _loop: Any
    extensible: bool
    clock: Any  # lbctl.sandbox.clock.Clock
    life: Any  # lbctl.sandbox.life.Life | None

    def broker_lm_class(self, broker: str) -> str:  # TestCluster's (a broker mid-migration)
        raise NotImplementedError

    def _ops_init(self) -> None:
        self.dynamic: dict[str, str] = {}
        self.pending: dict[str, Pending] = {}
        self.reassignment: Reassignment | None = None
        self.nth_faults: list[NthFault] = []
        self.after_mutation: list[Callable[[str, str, dict[str, str]], None]] = []
        self.removed: list[str] = []

    # ---- set-up --------------------------------------------------------------------------------
    def set_reassignment(self, *, delay: float = 0.0, elsewhere: set[str] | None = None,
                         elsewhere_every: int | None = None) -> None:
        """Unloads leave the bundle unowned for ``delay`` seconds; ``elsewhere`` bundles (full
        names), or every ``elsewhere_every``-th unload, end on another broker than asked."""
        self.reassignment = Reassignment(delay, set(elsewhere or ()), elsewhere_every)

    def remove_broker(self, broker: str) -> None:
        """The broker goes away: it stops listening, leaves the list, its bundles move on."""
        with self._lock:
            if broker not in self.brokers:
                return
            del self.brokers[broker]
            self.removed.append(broker)
            ids = list(self.brokers)
            for i, (b, o) in enumerate(sorted(self.owners.items())):
                if o == broker and ids:
                    self.owners[b] = ids[i % len(ids)]
            for p in self.pending.values():
                if p.destination == broker:
                    p.destination = None
            if self.life is not None:
                self.life.ownership_changed()
        port = int(broker.rsplit(":", 1)[1])
        for srv in list(self._servers):
            socks = srv.sockets or ()
            if any(s.getsockname()[1] == port for s in socks) and self._loop is not None:
                self._loop.call_soon_threadsafe(srv.close)

    # ---- hooks called by TestCluster ----------------------------------------------------------
    def _defer_move(self, bundle: str, dest: str | None) -> bool:
        """Called by ``_move`` (under the lock): True when the move is deferred (see
        :meth:`set_reassignment`)."""
        r = self.reassignment
        if r is None or bundle not in self.owners:
            return False
        if self.extensible and dest is not None:
            return False  # the extensible load manager transfers straight to the destination
        r.unloads += 1
        elsewhere = bundle in r.elsewhere or bool(
            r.elsewhere_every and r.unloads % r.elsewhere_every == 0)
        owner = self.owners.pop(bundle)
        # a living cluster's time is where its life has run to: a leader's cycle run late (the
        # loop catching up with a faster clock, on a busy machine) unloads at its cycle's time,
        # so its bundles' clients reconnect r.delay later, not r.delay after the wall caught up
        now = self.life.now if self.life is not None else self.clock.now()
        self.pending[bundle] = Pending(dest, now + r.delay, elsewhere)
        self._settle_losses(bundle, owner)
        return True

    def _settle_losses(self, bundle: str, owner: str) -> None:
        self._note_move(bundle, owner, None)

    def _note_move(self, bundle: str, owner: str | None, dest: str | None) -> None:
        """``lastBundleLosses``/``lastBundleGains`` as sets, as ``LocalBrokerData.update``
        computes them (a bundle gained back is no longer lost, and the other way round)."""
        if self.life is not None:
            self.life.ownership_changed()
        for broker, mine, other in ((owner, "losses", "gains"), (dest, "gains", "losses")):
            st = self.brokers.get(broker) if broker else None
            if st is None:
                continue
            if bundle in getattr(st, other):
                getattr(st, other).remove(bundle)
            if bundle not in getattr(st, mine):
                getattr(st, mine).append(bundle)

    def _settle(self, now: float | None = None) -> None:
        """Give every pending bundle whose delay has passed its new owner (under the lock)."""
        now = self.clock.now() if now is None else now
        for bundle, p in list(self.pending.items()):
            if p.ready_at <= now:
                self._assign(bundle)

    def _assign(self, bundle: str) -> str | None:
        p = self.pending.pop(bundle, None)
        ids = list(self.brokers)
        if not ids:
            return None
        dest = p.destination if p is not None else None
        if dest not in self.brokers:
            dest = None
        if p is not None and p.elsewhere:
            others = [b for b in ids if b != (dest or "")]
            dest = others[len(bundle) % len(others)] if others else dest
        if dest is None and self.life is not None and self.life.leader is not None:
            dest = self.life.leader.place(bundle)  # selectBroker, as the leader assigns it
        if dest is None:
            dest = ids[sum(map(ord, bundle)) % len(ids)]
        self.owners[bundle] = dest
        self._note_move(bundle, None, dest)
        return dest

    def _route_ops(self, broker: str, method: str, path: str, seg: list[str],
                   query: dict[str, str]) -> Answer | None:
        """Serve what this mixin adds; None lets the test cluster's router answer."""
        with self._lock:
            self._settle()
            for f in self.nth_faults:
                if f.hit(method, path):
                    return _json(f.status, {"reason": f.reason})
        if path.startswith("/lookup/v2/topic/"):
            return self._lookup(broker, path)
        if seg[:1] == ["brokers"]:
            return self._brokers_ops(broker, method, path, seg)
        return None

    def _after(self, method: str, path: str, query: dict[str, str]) -> None:
        if method != "GET":
            for hook in list(self.after_mutation):
                hook(method, path, query)

    # ---- endpoints --------------------------------------------------------------------------
    def _lookup(self, broker: str, path: str) -> Answer:
        import zlib

        parts = path[len("/lookup/v2/topic/"):].split("/", 3)
        if len(parts) != 4:
            return _json(404, {"reason": "HTTP 404 Not Found"})
        domain, tenant, ns, topic = parts
        namespace = f"{tenant}/{ns}"
        full = f"{domain}://{namespace}/{topic}"
        with self._lock:
            bounds = self.namespaces.get(namespace)
            if bounds is None:
                return _json(404, {"reason": f"Topic not found {full}"})
            h = zlib.crc32(full.encode()) & 0xFFFFFFFF
            bundle = None
            for a, b in zip(bounds, bounds[1:], strict=False):
                if a <= h < b or (b == 0xFFFFFFFF and h == b):
                    bundle = f"{namespace}/0x{a:08x}_0x{b:08x}"
                    break
            if bundle is None:
                return _json(404, {"reason": f"Topic not found {full}"})
            owner = self.owners.get(bundle)
            if owner is None:
                p = self.pending.get(bundle)
                if p is not None and p.ready_at > self.clock.now():
                    return _json(503, {"reason": f"No broker was found available for topic {full}"})
                owner = self._assign(bundle)
                if owner is None:
                    return _json(503, {"reason": f"No broker was found available for topic {full}"})
        if owner != broker:
            loc = f"http://{owner}{path}?authoritative=true"
            return 307, b"", "", {"Location": loc}
        host = owner.rsplit(":", 1)[0]
        return _json(200, {"brokerUrl": f"pulsar://{host}:6650", "brokerUrlTls": None,
                           "httpUrl": f"http://{owner}", "httpUrlTls": None,
                           "nativeUrl": f"pulsar://{host}:6650"})

    def _brokers_ops(self, broker: str, method: str, path: str, seg: list[str]) -> Answer | None:
        if method == "GET" and seg == ["brokers", "configuration"]:
            return _json(200, list(DYNAMIC_SETTINGS))
        if method == "GET" and seg == ["brokers", "configuration", "values"]:
            with self._lock:
                return _json(200, dict(self.dynamic))
        if method == "GET" and seg == ["brokers", "configuration", "runtime"]:
            with self._lock:
                return _json(200, {**self.config, **self.dynamic,
                                   "loadManagerClassName": self.broker_lm_class(broker)})
        if method == "POST" and len(seg) == 4 and seg[1] == "configuration":
            name, value = seg[2], seg[3]
            if name not in DYNAMIC_SETTINGS:
                return _json(412, {"reason": " Invalid dynamic-config value"})
            if name in _BOOLEAN and value not in ("true", "false"):
                return _json(412, {"reason": f"Invalid value {value} for {name}"})
            with self._lock:
                self.dynamic[name] = value
            return 204, b"", "", {}
        if method == "DELETE" and len(seg) == 3 and seg[1] == "configuration":
            name = seg[2]
            if name not in DYNAMIC_SETTINGS:
                return _json(412, {"reason": " Can't update non-dynamic configuration"})
            with self._lock:
                if self.dynamic.pop(name, None) is None:
                    return _json(404, {"reason": f"Configuration {name} not found"})
            return 204, b"", "", {}
        if method == "GET" and len(seg) == 4 and seg[3] == "ownedNamespaces":
            if seg[1] != self.cluster:
                return _json(404, {"reason": f"Cluster {seg[1]} does not exist."})
            target = seg[2]
            if target != broker:
                if target not in self.brokers:
                    return _json(404, {"reason": f"Broker {target} not found"})
                return 307, b"", "", {"Location": f"http://{target}{path}"}
            with self._lock:
                owned = [b for b, o in self.owners.items() if o == broker]
            owned.append(f"pulsar/{self.cluster}/{broker}/0x00000000_0xffffffff")
            status = {"broker_assignment": "shared", "is_controlled": False, "is_active": True}
            return _json(200, {b: dict(status) for b in owned})
        return None


def _json(status: int, obj: Any) -> Answer:
    return status, json.dumps(obj).encode(), "application/json", {}
