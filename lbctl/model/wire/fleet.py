"""The rows of ``lbctl fleet``'s tables, declared once: one record per table (``snapshots``,
``brokers``, ``bundles``, ``topics``), in column order.

Both ingest paths write them — lbctl's reader, row by row in Python (:mod:`lbctl.fleet.rows`),
and Spark's native path, column by column (:mod:`lbctl.fleet.native_tables`) — and both take the
tables' columns and types from here (:mod:`lbctl.fleet.schema` maps a record to Spark types). A
field's ``Meta(extra={"column": …})`` names the column of the readers' one-batch *union* of every
kind of row that feeds it, where that differs from the table's own name (a bundle's ``topics``
is the union's ``num_topics``, as a broker's ``num_topics`` is). Times are epoch milliseconds
(``captured_at``) and the UTC day (``date``, a partition column); resource columns are Pulsar's
``ResourceUsage.percentUsage()`` (percent), usages fractions as Pulsar keeps them, rates msg/s,
throughputs bytes/s; ``None`` is a missing figure (a usage with no limit, NaN).
"""


from typing import Annotated, Any

from msgspec import Meta, Struct

from lbctl.model.wire.java import LONG_MAX

#: a Spark ``long`` (Parquet INT64)
Long = Annotated[int, Meta(ge=-LONG_MAX - 1, le=LONG_MAX)]


def _from(column: str) -> Meta:
    return Meta(extra={"column": column})


class SnapshotsRow(Struct, frozen=True):
    """One per snapshot: its cluster and time, its sizes, the thresholds the report needs (its
    ``config`` resolved with Pulsar's defaults) and the snapshot itself as compact JSON."""

    cluster: str
    date: str
    captured_at: Long
    source: str
    load_manager: str
    brokers: Annotated[Long, _from("num_brokers")]
    bundles: Annotated[Long, _from("num_bundles")]
    topics: Annotated[Long, _from("num_topics")]
    overloaded_threshold: float
    split_max_topics: Long
    split_max_sessions: Long
    split_max_msg_rate: float
    split_max_bandwidth: float
    raw: str


class BrokersRow(Struct, frozen=True):
    """One per broker per snapshot: resource percentages, ``getMaxResourceUsage()`` and
    ``getMaxResourceUsageWithWeight`` with the snapshot's weights, rates and counts."""

    cluster: str
    date: str
    captured_at: Long
    broker: str
    cpu: float | None
    memory: float | None
    direct_memory: float | None
    bandwidth_in: float | None
    bandwidth_out: float | None
    max_usage: float | None
    weighted_max_usage: float | None
    msg_rate_in: float
    msg_rate_out: float
    msg_throughput_in: float
    msg_throughput_out: float
    num_topics: Long
    num_bundles: Long
    num_consumers: Long
    num_producers: Long


class BundlesRow(Struct, frozen=True):
    """One per owned bundle per snapshot: its owner, the owner's ``lastStats`` figures, and the
    owner's bundle count and throughput."""

    cluster: str
    date: str
    captured_at: Long
    bundle: str
    namespace: str
    broker: str
    msg_rate_in: float
    msg_rate_out: float
    msg_throughput_in: float
    msg_throughput_out: float
    topics: Annotated[Long, _from("num_topics")]
    consumers: Annotated[Long, _from("num_consumers")]
    producers: Annotated[Long, _from("num_producers")]
    owner_bundles: Long
    owner_throughput: float


class TopicsRow(Struct, frozen=True):
    """One per topic of a snapshot's ``topics``, with the bundle its CRC-32 hash falls in."""

    cluster: str
    date: str
    captured_at: Long
    topic: str
    namespace: str
    bundle: str | None
    msg_rate_in: float
    msg_rate_out: float
    msg_throughput_in: float
    msg_throughput_out: float
    consumers: Annotated[Long, _from("num_consumers")]
    producers: Annotated[Long, _from("num_producers")]


class ErrorRow(Struct, frozen=True):
    """A file, or one line of a ``.jsonl`` sequence (``line``, 1-based; None: the whole file),
    lbctl's reader refused: ``message`` is its one-line reason (not a table)."""

    source: str
    message: str
    line: int | None = None


#: table → its row, in the order the tables are written
TABLES: dict[str, type[Struct]] = {"snapshots": SnapshotsRow, "brokers": BrokersRow,
                                   "bundles": BundlesRow, "topics": TopicsRow}
#: table → the ``kind`` of its rows in the readers' union
KIND_OF_TABLE = {"snapshots": "snapshot", "brokers": "broker", "bundles": "bundle",
                 "topics": "topic"}


def column_of(extra: dict[str, Any] | None, name: str) -> str:
    """The union column that feeds a table's column ``name``."""
    return str((extra or {}).get("column", name))
