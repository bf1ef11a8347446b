"""A snapshot file as tidy rows: what one Spark task produces for one input file.

Pure Python (no Spark, no pandas): :func:`file_rows` reads a file with lbctl's own reader
(:func:`lbctl.sources.snapshot.read_snapshot_file`), so a malformed file yields one ``error`` row
carrying exactly the one-line message ``lbctl snapshot validate`` prints, and a good file yields
rows of five kinds in one column-oriented batch (the union schema :data:`COLUMNS`). This is the
ingest's second path, for the files Spark's own JSON reader does not take
(:mod:`lbctl.fleet.native` says which); both paths write the same columns with the same values.
The tables' rows are declared once, in :mod:`lbctl.model.wire.fleet`; :data:`COLUMNS` and
:data:`TABLES` are read off those records.

* ``snapshot``: one per snapshot (cluster, time, sizes, the thresholds the report needs resolved
  from the snapshot's ``config`` with Pulsar's defaults, and the snapshot itself as compact JSON
  for replays);
* ``broker``: one per broker per snapshot. Resource columns are Pulsar's
  ``ResourceUsage.percentUsage()`` (percent, 32-bit float arithmetic); ``max_usage`` is
  ``LocalBrokerData.getMaxResourceUsage()`` and ``weighted_max_usage``
  ``getMaxResourceUsageWithWeight`` with the snapshot's weights, both fractions as Pulsar keeps
  them; rates msg/s, throughputs bytes/s, counts from the report;
* ``bundle``: one per owned bundle per snapshot (owner, the owner's ``lastStats`` figures, and
  the owner's bundle count and throughput, which the report needs per bundle);
* ``topic``: one per topic of the snapshot's ``topics`` (with the bundle its CRC-32 hash falls in);
* ``error``: ``message`` is the reader's one-line reason; ``line`` the number of the ``.jsonl``
  line refused (its other lines' rows are there: one bad line never loses the file's good
  snapshots), None when the whole file is.

Times are epoch milliseconds (``captured_at``) and the UTC day (``date``, a partition column).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from lbctl.errors import LbctlError
from lbctl.fleet.schema import columns
from lbctl.model.bundle import BundleName, locate, namespace_of, topic_hash, topic_namespace
from lbctl.model.cluster import ClusterState
from lbctl.model.load import NamespaceBundleStats
from lbctl.model.wire.fleet import KIND_OF_TABLE as KIND_OF_TABLE
from lbctl.model.wire.fleet import TABLES as ROWS
from lbctl.model.wire.fleet import ErrorRow, column_of


def _union() -> tuple[tuple[str, str], ...]:
    """(name, Spark type name) of every column of every kind of row, ``kind`` first."""
    out = {"kind": "string"}
    for record in (*ROWS.values(), ErrorRow):
        for name, kind, extra in columns(record):
            col = column_of(extra, name)
            if out.setdefault(col, kind) != kind:
                raise TypeError(f"column {col} declared {kind} and {out[col]}")
    return tuple(out.items())


#: (name, type) of the union schema; types are Spark SQL simple type names.
COLUMNS: tuple[tuple[str, str], ...] = _union()
COLUMN_NAMES = tuple(name for name, _ in COLUMNS)
_TYPES = dict(COLUMNS)

#: The written tables: union column → table column, in table order.
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    table: tuple((column_of(extra, name), name) for name, _, extra in columns(record))
    for table, record in ROWS.items()}


def table_schema(table: str) -> list[tuple[str, str]]:
    """(column, Spark type) of a written table, in order."""
    return [(dst, _TYPES[src]) for src, dst in TABLES[table]]


class Batch:
    """Column-oriented rows of the union schema (missing cells are ``None``)."""

    __slots__ = ("cols", "n")

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {name: [] for name in COLUMN_NAMES}
        self.n = 0

    def add(self, **values: Any) -> None:
        for name, col in self.cols.items():
            col.append(values.get(name))
        self.n += 1

    def __len__(self) -> int:
        return self.n


def utc_date(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def file_rows(path: str, *, chunk_rows: int = 65536) -> Iterator[Batch]:
    """The rows of one snapshot file, in batches of about ``chunk_rows``; a file that cannot be
    read or is malformed gives a single ``error`` row (and nothing else), and a ``.jsonl``
    sequence one ``error`` row per bad line (with ``line``) and the rows of its good lines."""
    from lbctl.sources.snapshot import read_snapshot_lines

    try:
        states, bad_lines = read_snapshot_lines(path)
    except LbctlError as e:
        yield error_batch(path, str(e).splitlines()[0] if str(e) else type(e).__name__)
        return
    except Exception as e:  # the reader's promise is one line; keep it even for surprises
        yield error_batch(path, f"{path}: cannot read: {type(e).__name__}: {e}")
        return
    batch = Batch()
    for refused in bad_lines:  # the file's other lines are kept
        batch.add(kind="error", source=path, message=str(refused).splitlines()[0],
                  line=refused.line)
    try:
        for st in states:
            snapshot_rows(st, path, batch)
            if len(batch) >= chunk_rows:
                yield batch
                batch = Batch()
    except LbctlError as e:  # e.g. a config value the settings cannot parse
        yield error_batch(path, str(e).splitlines()[0])
        return
    except Exception as e:  # one bad file never stops the run
        yield error_batch(path, f"{path}: cannot read: {type(e).__name__}: {e}".splitlines()[0])
        return
    if len(batch):
        yield batch


def error_batch(path: str, message: str) -> Batch:
    b = Batch()
    b.add(kind="error", source=path, message=message)
    return b


def snapshot_rows(st: ClusterState, source: str, out: Batch) -> None:
    """Append the snapshot, broker, bundle and topic rows of one snapshot to ``out``."""
    import orjson

    from lbctl.fleet.sections import config_info
    from lbctl.sources.snapshot import snapshot_to_dict

    info = config_info(st.config, st.dynamic_config)
    weights = info.weights
    common = {"cluster": st.cluster, "date": utc_date(st.captured_at),
              "captured_at": st.captured_at, "source": source}
    owners = st.owners()
    owned_by: dict[str, int] = {}
    for owner in owners.values():
        owned_by[owner] = owned_by.get(owner, 0) + 1
    out.add(
        kind="snapshot", **common, load_manager=st.load_manager, num_brokers=len(st.brokers),
        num_bundles=len(owners), num_topics=len(st.topics),
        overloaded_threshold=info.overloaded_threshold,
        split_max_topics=info.split_max_topics,
        split_max_sessions=info.split_max_sessions,
        split_max_msg_rate=info.split_max_msg_rate,
        split_max_bandwidth=info.split_max_bandwidth,
        raw=orjson.dumps(snapshot_to_dict(st)).decode(),
    )
    for broker, local in st.brokers.items():
        out.add(
            kind="broker", **common, broker=broker,
            cpu=local.cpu.percent, memory=local.memory.percent,
            direct_memory=local.directMemory.percent, bandwidth_in=local.bandwidthIn.percent,
            bandwidth_out=local.bandwidthOut.percent, max_usage=_finite(local.max_resource_usage()),
            weighted_max_usage=_finite(local.max_resource_usage_with_weight(*weights)),
            msg_rate_in=local.msgRateIn, msg_rate_out=local.msgRateOut,
            msg_throughput_in=local.msgThroughputIn, msg_throughput_out=local.msgThroughputOut,
            num_topics=local.numTopics, num_bundles=local.numBundles,
            num_consumers=local.numConsumers, num_producers=local.numProducers,
        )
    for bundle, owner in owners.items():
        local = st.brokers[owner]
        s = local.lastStats.get(bundle) or _NO_STATS
        out.add(
            kind="bundle", **common, bundle=bundle, namespace=namespace_of(bundle), broker=owner,
            msg_rate_in=s.msgRateIn, msg_rate_out=s.msgRateOut,
            msg_throughput_in=s.msgThroughputIn, msg_throughput_out=s.msgThroughputOut,
            num_topics=s.topics, num_consumers=s.consumerCount, num_producers=s.producerCount,
            owner_bundles=owned_by[owner],
            owner_throughput=local.msgThroughputIn + local.msgThroughputOut,
        )
    for topic, t in st.topics.items():
        ns = topic_namespace(topic)
        out.add(
            kind="topic", **common, topic=topic, namespace=ns,
            bundle=_bundle_of_topic(st, ns, topic, owners),
            msg_rate_in=t.msgRateIn, msg_rate_out=t.msgRateOut,
            msg_throughput_in=t.msgThroughputIn, msg_throughput_out=t.msgThroughputOut,
            num_consumers=t.consumerCount, num_producers=t.producerCount,
        )


_NO_STATS = NamespaceBundleStats()  # a bundle listed in ``bundles`` without ``lastStats``


def _finite(x: float) -> float | None:
    """Usage of a broker with no resource limits is -inf in Pulsar's max; store it as null."""
    return x if x == x and abs(x) != float("inf") else None


def _bundle_of_topic(st: ClusterState, ns: str, topic: str, owners: dict[str, str]) -> str | None:
    """The bundle a topic hashes into: the namespace's boundaries, else an owned bundle's range."""
    h = topic_hash(topic)
    bounds = st.namespaces.get(ns)
    if bounds is not None:
        return f"{ns}/{locate(bounds, h)}"
    for b in owners:
        if namespace_of(b) == ns and BundleName.parse(b).range.contains(h):
            return b
    return None
