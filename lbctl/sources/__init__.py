"""Where cluster state comes from: snapshot v1 files (:mod:`lbctl.sources.snapshot`)."""

from lbctl.sources.snapshot import (
    FORMAT,
    append_snapshot,
    parse_snapshot,
    read_snapshot_file,
    read_snapshots,
    snapshot_to_dict,
    summarize,
    write_snapshot,
    write_snapshots,
)

__all__ = [
    "FORMAT",
    "append_snapshot",
    "parse_snapshot",
    "read_snapshot_file",
    "read_snapshots",
    "snapshot_to_dict",
    "summarize",
    "write_snapshot",
    "write_snapshots",
]
