"""A running cluster, read over the admin REST API, as a :class:`~lbctl.model.cluster.ClusterState`.

What is read (REST only: no ZooKeeper, no Pulsar client):

1. ``GET /admin/v2/brokers/configuration/runtime`` on the admin URL: the settings in force (only the
   load-balancer settings lbctl declares are kept — the runtime configuration also holds secrets
   such as ``brokerClientAuthenticationParameters``, which must never reach a snapshot), the
   ``clusterName`` and the ``loadManagerClassName``; at the same time,
   ``GET /admin/v2/brokers/configuration/values``: which settings were set with
   ``update-dynamic-config`` (``dynamicConfig``, :meth:`LiveSource.discover`), the layer every
   reader of these settings resolves them with (:func:`lbctl.config.resolve`);
2. ``GET /admin/v2/brokers`` (at the same time as 1; the local cluster's active broker ids), or on
   older brokers ``GET /admin/v2/brokers/{cluster}`` (``GET /admin/v2/clusters`` when the runtime
   configuration does not name the cluster and there is exactly one);
3. concurrently, on every broker itself (``http://<broker id>``; per-broker data is answered by the
   receiving broker, never redirected): ``GET /admin/v2/broker-stats/load-report`` (its
   ``LocalBrokerData``) and, when topics are wanted, ``GET /admin/v2/broker-stats/topics`` (on an
   extensible cluster, where load-report answers 500, ``/broker-stats/metrics`` and
   ``/broker-stats/topics`` instead: :mod:`lbctl.sources.live_extensible`);
4. ``GET /admin/v2/tenants`` → ``GET /admin/v2/namespaces/{tenant}`` →
   ``GET /admin/v2/namespaces/{t}/{ns}/bundles``: every namespace's boundaries;
5. the placement data beside load (:mod:`lbctl.sources.live_policies`): the active brokers as
   ``availableBrokers`` (with those whose report could not be read), the isolation policies,
   anti-affinity groups and failure domains, and every namespace's topic lists in metadata.

A broker that fails or times out is reported in :attr:`LiveRead.failures` and left out; it is not
fatal. Each piece the admin API returns is decoded into its snapshot record
(:mod:`lbctl.model.wire.snapshot`, :func:`~lbctl.sources.live_data.live_snapshot`) and the
records are turned into the state by the same function that reads snapshot files, so a live
state and an exported file of it are the same thing. Reads taken at
slightly different moments can disagree (a bundle moving while the reports are read); such
conflicts are resolved and listed in :attr:`LiveRead.warnings`: a bundle reported by two brokers
stays with the report updated last, and a namespace whose boundaries no longer match its reported
bundles (a split in between) keeps the bundles and drops the boundaries.

Sources never decide: nothing here looks at load beyond copying it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from lbctl.admin.client import (
    ACTIVE_BROKERS,
    BROKER_TOPICS,
    BUNDLES,
    CLUSTERS,
    DYNAMIC_CONFIG_VALUES,
    LOAD_REPORT,
    LOCAL_BROKERS,
    NAMESPACES,
    RUNTIME_CONFIG,
    TENANTS,
    AdminClient,
    call,
)
from lbctl.admin.errors import AdminError, HttpError, NotFound
from lbctl.errors import LbctlError
from lbctl.model.cluster import EXTENSIBLE, MODULAR, SIMPLE, ClusterState
from lbctl.sources.live_data import (
    BrokerFailure,
    Discovery,
    LiveRead,
    Progress,
    flatten_topics,
    lb_settings,
    reconcile,
)
from lbctl.sources.live_dynamic import stored_values


class LiveSource:
    """``load()`` → :class:`ClusterState` of the cluster behind ``client``."""

    def __init__(self, client: AdminClient, *, topics: bool = True, namespaces: bool = True,
                 progress: Progress | None = None, clock: Callable[[], float] = time.time):
        self.client = client
        self.topics = topics
        self.namespaces = namespaces
        self.progress = progress or (lambda _s, _d, _t: None)
        self.clock = clock
        self.load_manager = MODULAR  # as the last discover() found it
        #: broker ids the cluster listed that are not host:port (never contacted) → why
        self.rejected: dict[str, str] = {}
        self.namespace_names: list[str] = []  # as the last _namespaces() listed them
        self.last_config: dict[str, Any] = {}  # the runtime configuration the last discovery read
        #: an extensible cluster's rebuilt BrokerLoadData JSON per broker, from the last
        #: load_reports() (monitor-brokers' extensible view)
        self.last_broker_load: dict[str, dict[str, Any]] = {}
        #: every key stored with ``update-dynamic-config`` (not only load-balancer ones, values
        #: as strings) as the last discovery that asked read it, and that request's error
        #: (``doctor`` reads both, so that a run asks once)
        self.stored: dict[str, str] = {}
        self.stored_error: AdminError | None = None
        #: the load-balancer settings stored with ``update-dynamic-config``, as the last
        #: discovery that asked read them (:attr:`Discovery.dynamic`)
        self.last_dynamic: dict[str, Any] = {}

    #: also read every broker's ``ownedNamespaces`` (:mod:`lbctl.sources.live_ownership`) into
    #: :attr:`LiveRead.owners`; a cluster that refuses it is read from the reports, with a note
    ownership: bool = False

    def load(self) -> ClusterState:
        return self.read().state

    # ---- steps -----------------------------------------------------------------------------
    def discover(self, *, dynamic: bool = False) -> Discovery:
        """The cluster, its active brokers and the runtime configuration, in one round trip when
        the broker serves ``GET /admin/v2/brokers`` (the local cluster's brokers, Pulsar 3.x+).

        ``dynamic``: also the settings stored with ``update-dynamic-config`` (``GET /admin/v2/
        brokers/configuration/values``), asked in the same round trip: what every reader of a
        live read's settings resolves them with (:attr:`Discovery.dynamic`)."""
        calls = [call(RUNTIME_CONFIG), call(LOCAL_BROKERS)]
        if dynamic:
            calls.append(call(DYNAMIC_CONFIG_VALUES))
        raw, local, *stored = self.client.gather(calls)
        d = self._discovery(raw, local)
        if dynamic:
            self._take_stored(stored[0], d)
        return d

    def _take_stored(self, answer: Any, d: Discovery) -> None:
        """The answer to ``GET /admin/v2/brokers/configuration/values`` into ``d.dynamic`` (only
        the load-balancer keys lbctl declares: nothing else reaches a snapshot) and
        :attr:`stored`. Nothing stored (404 on releases without the node): no layer. Any other
        refusal: no layer, and a note that the runtime configuration's values stand alone.

        Their values are in the runtime configuration already (``BrokerService.
        handleDynamicConfigurationUpdates`` sets each over the field broker.conf filled, at start
        and on every change); this says which came from there, and they beat a
        ``--broker-conf`` file as they beat the broker's own."""
        self.stored, self.stored_error = {}, None
        try:
            if isinstance(answer, AdminError):
                raise answer
            self.stored = stored_values(answer)
        except NotFound as e:
            self.stored_error = e
        except AdminError as e:
            self.stored_error = e
            d.dynamic_notes.append(f"dynamic configuration not read ({e}): a --broker-conf value "
                                   "is taken over a value set with update-dynamic-config")
        d.dynamic, dropped = lb_settings(self.stored)
        d.dynamic_notes += [f"dynamic setting {k} ignored: value cannot be parsed" for k in dropped]
        self.last_dynamic = d.dynamic

    def _discovery(self, raw: Any, local: Any) -> Discovery:
        """:meth:`discover` from the answers to its two first requests."""
        if isinstance(raw, AdminError):
            raise raw
        if not isinstance(raw, dict):
            raise HttpError("GET /admin/v2/brokers/configuration/runtime: expected a JSON object")
        self.last_config = raw
        cluster = raw.get("clusterName")
        if not isinstance(cluster, str) or not cluster:
            clusters = self.client.json(call(CLUSTERS))
            if not isinstance(clusters, list) or len(clusters) != 1:
                raise LbctlError("cannot tell which cluster the admin URL serves (no clusterName in "
                                 f"its runtime configuration; clusters: {clusters})")
            cluster = str(clusters[0])
            local = None
        if isinstance(local, NotFound) or (isinstance(local, AdminError) and local.status == 405):
            local = None  # an older broker: ask by cluster name
        elif isinstance(local, AdminError):
            raise local
        brokers = local if local is not None else self.client.json(
            call(ACTIVE_BROKERS, cluster=cluster))
        if not isinstance(brokers, list) or not all(isinstance(b, str) for b in brokers):
            raise HttpError(f"GET /admin/v2/brokers/{cluster}: expected a JSON array of broker ids")
        brokers = self._valid_ids(brokers)
        from lbctl.sources.live_extensible import is_extensible_class

        lm = EXTENSIBLE if is_extensible_class(raw.get("loadManagerClassName")) else MODULAR
        self.load_manager = lm
        return Discovery(cluster, list(brokers), raw, lm)

    def _valid_ids(self, brokers: list[str]) -> list[str]:
        """The broker ids that are ``host:port`` (each then trusted as a destination of requests,
        within ``--broker-host-allow``); the others are never contacted and listed in
        :attr:`rejected` (this discovery's: a refresh lists the ones the cluster still names).
        Duplicates are dropped."""
        valid: list[str] = []
        self.rejected = {}
        for b in dict.fromkeys(brokers):
            try:
                self.client.broker_url(b)
            except AdminError as e:
                self.rejected[b] = str(e)
                continue
            valid.append(b)
        return valid

    def load_reports(self, brokers: list[str]) -> dict[str, dict[str, Any] | AdminError]:
        """Every broker's ``LocalBrokerData`` (or its error), read concurrently. On an extensible
        cluster (see :mod:`lbctl.sources.live_extensible`) they are rebuilt from each broker's
        metrics and topic stats: the load-report endpoint answers 500 there."""
        from lbctl.sources.live_extensible import ExtensibleReader

        if self.load_manager == EXTENSIBLE:
            return ExtensibleReader(self).local_reports(brokers) or {}
        results = self.client.gather(
            [call(LOAD_REPORT, base=self.client.broker_url(b)) for b in brokers])
        return self._reports(brokers, results)

    def _reports(self, brokers: list[str], results: list[Any]) -> dict[str, dict[str, Any] | AdminError]:
        """:meth:`load_reports` from the answers to its requests."""
        from lbctl.sources.live_extensible import ExtensibleReader

        out: dict[str, dict[str, Any] | AdminError] = {}
        for b, r in zip(brokers, results, strict=True):
            if not isinstance(r, AdminError) and not isinstance(r, dict):
                r = HttpError(f"GET {self.client.broker_url(b)}/admin/v2/broker-stats/load-report: "
                              "expected a LocalBrokerData object"
                              + (" (got null: no load manager report)" if r is None else ""))
            out[b] = r
        if out and all(isinstance(r, AdminError) and r.status == 500 for r in out.values()):
            rebuilt = ExtensibleReader(self).local_reports(brokers, probe=True)
            if rebuilt is not None:
                self.load_manager = EXTENSIBLE
                return rebuilt
        return out

    def discover_and_reports(
        self, known: list[str]
    ) -> tuple[Discovery, dict[str, dict[str, Any] | AdminError]]:
        """A refresh (``monitor-brokers``): the discovery and every broker's load report.

        When the brokers are known from the previous refresh of a modular cluster, their load
        reports are asked for together with the discovery — one round trip instead of two; a
        broker that joined since is read right after, one that left is dropped.
        """
        known = [b for b in known if b not in self.rejected]  # (never contacted)
        if not known or self.load_manager != MODULAR:
            d = self.discover(dynamic=True)
            return d, self.load_reports(d.brokers)
        results = self.client.gather(
            [call(RUNTIME_CONFIG), call(LOCAL_BROKERS), call(DYNAMIC_CONFIG_VALUES)]
            + [call(LOAD_REPORT, base=self.client.broker_url(b)) for b in known])
        d = self._discovery(results[0], results[1])
        self._take_stored(results[2], d)
        if d.load_manager != MODULAR:
            return d, self.load_reports(d.brokers)
        listed = set(d.brokers)
        # (if every report answered 500, _reports found an extensible cluster and rebuilt them)
        reports = {b: r for b, r in self._reports(known, results[3:]).items() if b in listed}
        joined = [b for b in d.brokers if b not in reports]
        if joined:
            reports.update(self.load_reports(joined))
        return d, reports

    def read(self) -> LiveRead:
        """One read of the cluster (module docstring), with the brokers' ownership listings when
        :attr:`ownership` is set: read right after the reports, one request per active broker."""
        read = self._read()
        if self.ownership:
            from lbctl.sources.live_ownership import merged, read_ownership

            got = read_ownership(self.client, read.state.cluster, list(read.state.available()))
            read.owners = None if got.owners is None else merged(read.state.owners(), got)
            if got.note is not None:
                read.warnings.append(got.note)
            elif got.failed:
                read.warnings.append(f"{len(got.failed)} broker(s) did not answer ownedNamespaces: "
                                     "their bundles are as their load reports list them")
        return read

    def _read(self) -> LiveRead:
        captured = int(self.clock() * 1000)
        self.progress("brokers", 0, 1)
        d = self.discover(dynamic=True)
        failures: list[BrokerFailure] = []
        warnings: list[str] = []
        config, dropped = lb_settings(d.config)
        warnings += [f"runtime setting {k} ignored: value cannot be parsed" for k in dropped]
        warnings += list(self.rejected.values())

        from lbctl.sources.live_extensible import ExtensibleReader

        if d.load_manager == EXTENSIBLE:
            return ExtensibleReader(self).read(d, captured, config, failures, warnings)
        brokers: dict[str, Any] = {}
        if d.load_manager == MODULAR:
            self.progress("load reports", 0, len(d.brokers))
            errors: list[AdminError] = []
            reports = self.load_reports(d.brokers)
            if self.load_manager == EXTENSIBLE:  # every load-report answered 500: see load_reports
                warnings.append(
                    "every broker's load-report answered 500 and their metrics are the extensible "
                    "load manager's, although loadManagerClassName is "
                    f"{d.config.get('loadManagerClassName')!r}: read as an extensible cluster")
                return ExtensibleReader(self).read(d, captured, config, failures, warnings)
            for b, r in reports.items():
                if isinstance(r, AdminError):
                    failures.append(BrokerFailure(b, str(r), r.exit_code))
                    errors.append(r)
                else:
                    brokers[b] = r
            if errors and not brokers:
                raise errors[0]  # no broker answered: that is the cluster's answer, not one broker's
            self.progress("load reports", len(d.brokers), len(d.brokers))
        else:
            brokers = {b: {} for b in d.brokers}  # snapshot v1: the load report is not served

        topics: dict[str, Any] = {}
        if self.topics and brokers:
            topics = self._topics(list(brokers), failures)
        namespaces: dict[str, Any] = {}
        if self.namespaces:
            namespaces = self._namespaces(failures)
        placement = self.placement_sections(d, warnings)
        unreadable = [b for b in d.brokers if b not in brokers]
        if unreadable and d.load_manager == MODULAR:
            warnings.append(f"{len(unreadable)} active broker(s) without a readable load report "
                            "are listed as available: the snapshot gives them no bundle (the "
                            "leader may still have their report)")

        warnings += reconcile(brokers, namespaces)
        sections: dict[str, Any] = {}
        if namespaces:
            sections["namespaces"] = namespaces
        if topics:
            sections["topics"] = topics
        sections.update(placement)
        from lbctl.sources.live_data import live_snapshot
        from lbctl.sources.snapshot_schema import state_from_wire

        name = f"live:{d.cluster}"
        from lbctl.sources.live_data import is_simple_report

        # every broker serves SimpleLoadManagerImpl's LoadReport: that is the cluster's load manager
        lm = SIMPLE if brokers and all(map(is_simple_report, brokers.values())) else d.load_manager
        snap = live_snapshot(name, cluster=d.cluster, captured_at=captured,
                             load_manager=lm, config=config, brokers=brokers,
                             sections=sections)
        return LiveRead(state_from_wire(snap, name), snap, failures, warnings)

    def placement_sections(self, d: Discovery, warnings: list[str]) -> dict[str, Any]:
        """``availableBrokers`` always; ``policies`` when namespaces are read; ``namespaceTopics``
        when topics are read too (:mod:`lbctl.sources.live_policies`)."""
        from lbctl.sources.live_policies import read_namespace_topics, read_policies

        out: dict[str, Any] = {"availableBrokers": list(d.brokers)}
        out.update(self.dynamic_section(d, warnings))
        if not self.namespaces:
            return out
        self.progress("policies", 0, 1)
        policies = read_policies(self.client, d.cluster, self.namespace_names, warnings)
        if policies is not None:
            out["policies"] = policies
        if self.topics:
            self.progress("topic lists", 0, len(self.namespace_names))
            listed = read_namespace_topics(self.client, self.namespace_names, warnings)
            if listed:
                out["namespaceTopics"] = listed
            self.progress("topic lists", len(self.namespace_names), len(self.namespace_names))
        self.progress("policies", 1, 1)
        return out

    def dynamic_section(self, d: Discovery, warnings: list[str]) -> dict[str, Any]:
        """``dynamicConfig``: the load-balancer settings stored with ``update-dynamic-config``, as
        the discovery read them (:meth:`_take_stored`), with what it left to say."""
        warnings += d.dynamic_notes
        return {"dynamicConfig": dict(d.dynamic)} if d.dynamic else {}

    def _topics(self, brokers: list[str], failures: list[BrokerFailure]) -> dict[str, Any]:
        self.progress("topic stats", 0, len(brokers))
        results = self.client.gather(
            [call(BROKER_TOPICS, base=self.client.broker_url(b)) for b in brokers])
        topics: dict[str, Any] = {}
        for b, r in zip(brokers, results, strict=True):
            if isinstance(r, AdminError):
                failures.append(BrokerFailure(b, f"topic stats: {r}", r.exit_code))
            elif isinstance(r, dict):
                topics.update(flatten_topics(r))
        self.progress("topic stats", len(brokers), len(brokers))
        return topics

    def _namespaces(self, failures: list[BrokerFailure]) -> dict[str, Any]:
        tenants = self.client.json(call(TENANTS))
        if not isinstance(tenants, list):
            raise HttpError("GET /admin/v2/tenants: expected a JSON array")
        self.progress("namespaces", 0, len(tenants))
        lists = self.client.gather([call(NAMESPACES, tenant=t) for t in tenants])
        names: list[str] = []
        for t, r in zip(tenants, lists, strict=True):
            if isinstance(r, AdminError):
                failures.append(BrokerFailure(f"tenant {t}", str(r), r.exit_code))
            elif isinstance(r, list):
                names += [n for n in r if isinstance(n, str) and n.count("/") == 1]
        self.namespace_names = names
        self.progress("bundles", 0, len(names))
        datas = self.client.gather(
            [call(BUNDLES, tenant=n.split("/")[0], namespace=n.split("/")[1]) for n in names])
        out: dict[str, Any] = {}
        for n, r in zip(names, datas, strict=True):
            if isinstance(r, AdminError):
                failures.append(BrokerFailure(f"namespace {n}", str(r), r.exit_code))
            elif isinstance(r, dict) and isinstance(r.get("boundaries"), list):
                out[n] = {"boundaries": r["boundaries"],
                          "numBundles": r.get("numBundles", len(r["boundaries"]) - 1)}
        self.progress("bundles", len(names), len(names))
        return out


