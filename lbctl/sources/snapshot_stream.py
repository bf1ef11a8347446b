"""A large ``.jsonl`` sequence read snapshot by snapshot, so a replay holds one at a time.

:func:`lbctl.sources.snapshot.read_snapshots` holds every snapshot of a sequence (240 snapshots of
2,000 bundles: half a gigabyte). A replay needs them one after another, plus a little of each up
front: the load manager and the modelled release are chosen from the last snapshot's settings and
broker versions, and every snapshot is validated before the first cycle runs (an operator gets
the one-line error of a bad line N before any output, as before). So a sequence file larger than
:data:`STREAM_BYTES` (after decompression) is read in passes, each streamed, in constant memory:

1. the bytes: the same bounds and gzip checks as the whole-file read (too large, bad gzip data,
   truncated, trailing garbage, empty), before any line is decoded — the same first error;
2. every line decoded and validated with the same messages (``file:N``, the partial last line),
   keeping per snapshot only a header (:func:`_header`: cluster, time, settings, broker versions);
3. the replay: the lines decoded again, one snapshot yielded at a time
   (:meth:`StreamedSnapshots.states`); a file changed in between is an error, never a silent mix:
   every pass opens the same file (device and inode, checked by ``fstat`` of the open
   descriptor: a file renamed over the name is refused) and each line replayed has the digest
   (BLAKE2b-128) its validated self had, checked before it is decoded — the bytes replayed are
   the bytes validated. Lines appended after the validation are not replayed.

A sequence out of ``capturedAt`` order (the replay sorts it), several files, standard input and
smaller files are read whole as before. ``LBCTL_NO_STREAM=1`` reads every file whole (the
benchmark's baseline, ``benchmarks/replay_sequence.py``).
"""

from __future__ import annotations

import gc
import os
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from msgspec import Struct

from lbctl.errors import SnapshotError
from lbctl.model.cluster import ClusterState
from lbctl.model.load import LocalBrokerData
from lbctl.records import replace
from lbctl.safe.files import (
    CUT_GZIP,
    GZIP_MAGIC,
    LIMITS,
    LineCheck,
    line_too_long,
    max_line_bytes,
    open_regular,
    too_large,
    warn,
)
from lbctl.sources.snapshot import (
    _BOM,
    DUPLICATE_CHECK_BYTES,
    STDIN,
    PartialLastLine,
    _kind,
    check_one_cluster,
    jsonl_snapshot,
    read_snapshots,
)

#: sequence files larger than this (decompressed) are streamed; smaller ones are read whole
STREAM_BYTES = DUPLICATE_CHECK_BYTES
_CHUNK = 1 << 20
_DIGEST = 16  # BLAKE2b-128
_EMPTY: MappingProxyType[str, object] = MappingProxyType({})


class StreamedSnapshots(Struct, frozen=True):
    """A validated sequence file: its snapshots' headers now, the snapshots one at a time."""

    name: str
    gz: bool
    check_keys: bool
    headers: tuple[ClusterState, ...]
    identity: tuple[int, int] = (0, 0)  # (st_dev, st_ino) of the file validated
    #: the digest of each non-blank line validated, in order, end to end (:data:`_DIGEST` bytes
    #: each: one object, not one per line)
    digests: bytes = b""

    def __len__(self) -> int:
        return len(self.headers)

    def states(self) -> Iterator[ClusterState]:
        """Every snapshot in file order (already ``capturedAt`` order), decoded as it is needed —
        each only after its bytes proved to be the ones validated."""
        count = 0
        expect = _Expect(self.identity, self.digests)
        for state in _parse_lines(self.name, self.gz, self.check_keys, expect=expect):
            if state is None:
                return  # lines appended since the check: not part of this replay
            count += 1
            yield state
        if count != len(self.headers):
            raise SnapshotError(f"{self.name}: the file changed while it was replayed")


class _Expect:
    """What a pass must find: the file's identity, and the digests of its lines (pass 2 fills
    them, pass 3 checks them)."""

    def __init__(self, identity: tuple[int, int] | None = None, digests: bytes | None = None):
        self.identity = identity
        self.digests = digests
        self.seen = bytearray()  # the digests of the lines seen so far (pass 2 keeps them)
        self.count = 0  # how many lines were seen

    def digests_seen(self) -> bytes:
        return bytes(self.seen)

    def opened(self, name: str, identity: tuple[int, int]) -> None:
        if self.identity is None:
            self.identity = identity
        elif identity != self.identity:
            raise SnapshotError(f"{name}: the file changed while it was replayed (another file "
                                "was put in its place since it was validated)")


def open_sequence(paths: Sequence[Path | str]) -> StreamedSnapshots | list[ClusterState]:
    """The snapshots of ``paths``: streamed (one large ``.jsonl`` in ``capturedAt`` order), else
    :func:`lbctl.sources.snapshot.read_snapshots`'s list. Errors are that function's."""
    if len(paths) != 1 or str(paths[0]) == STDIN or os.environ.get("LBCTL_NO_STREAM", "") not in (
            "", "0"):
        return read_snapshots(paths)
    name = str(paths[0])
    kind, gz_name = _kind(name)
    if kind != "jsonl":
        return read_snapshots(paths)
    size, gz, identity = _check_bytes(name, gz_name)
    if size <= STREAM_BYTES:
        return read_snapshots(paths)
    seen = _Expect(identity)
    headers: list[ClusterState] = []
    # the validating pass checks every line for repeated keys, as the whole-file read does (one
    # rule: lbctl.sources.snapshot._check_duplicate_keys); the replay's passes read lines whose
    # digests match the validated ones, so they need not check again
    for st in _parse_lines(name, gz, True, expect=seen):
        if st is not None:
            headers.append(_header(st, headers[-1] if headers else None))
    check_one_cluster(headers)
    if any(b.captured_at < a.captured_at for a, b in zip(headers, headers[1:], strict=False)):
        return read_snapshots(paths)  # the replay sorts it: read whole
    assert seen.identity is not None
    return StreamedSnapshots(name, gz, False, tuple(headers), seen.identity,
                             seen.digests_seen())


def _header(st: ClusterState, prev: ClusterState | None = None) -> ClusterState:
    """What the replay reads of a snapshot before its cycle: cluster, load manager, time, source,
    settings and the brokers' versions (the release modelled); nothing of the bundles, nor the
    recently unloaded bundles (the replay reads them from the snapshot itself).

    Every snapshot's header is held for the whole replay, so what equals the previous header's
    — the cluster's name, the configuration, the brokers with their versions: a sequence's
    usual case — is the previous header's object, not a copy (issue 30: a copy per snapshot
    grew the replay by kilobytes a snapshot). The reader's name index (``names``) goes too: it
    holds the snapshot's whole reports and bundle table (~57 kB a snapshot at 10 brokers × 100
    bundles), and a header's new brokers mapping could not use it anyway."""
    if prev is not None and _same_versions(st, prev):
        brokers = prev.brokers
    else:
        brokers = MappingProxyType({b: LocalBrokerData(brokerVersionString=r.brokerVersionString)
                                    for b, r in st.brokers.items()})
    config = prev.config if prev is not None and prev.config == st.config else st.config
    cluster = prev.cluster if prev is not None and prev.cluster == st.cluster else st.cluster
    return replace(st, cluster=cluster, brokers=brokers, config=config, bundle_data=None,
                   namespaces=_EMPTY, topics=_EMPTY, broker_load_data=_EMPTY,
                   top_bundles_load_data=_EMPTY, namespace_topics=_EMPTY, observed=None,
                   recently_unloaded=_EMPTY, recently_unloaded_brokers=_EMPTY, names=None)


def _same_versions(st: ClusterState, header: ClusterState) -> bool:
    """Whether ``st`` has the brokers of ``header``, in the same order, with the same versions."""
    if len(st.brokers) != len(header.brokers):
        return False
    return all(b == h and r.brokerVersionString == v.brokerVersionString
               for (b, r), (h, v) in zip(st.brokers.items(), header.brokers.items(),
                                         strict=True))


# --- bytes ------------------------------------------------------------------------------------
def _raw(name: str, expect: _Expect) -> Iterator[bytes]:
    """The file's bytes in chunks, bounded as ``read_regular`` bounds them; the open file must
    be the one ``expect`` names (the first pass names it)."""
    cap = LIMITS.max_input_bytes
    fd = open_regular(name, what="a snapshot file", error=SnapshotError)
    try:
        st = os.fstat(fd)
        size = st.st_size
        expect.opened(name, (st.st_dev, st.st_ino))
    except OSError:
        size = 0
    except SnapshotError:
        os.close(fd)
        raise
    if size > cap:
        os.close(fd)
        raise SnapshotError(too_large(name, cap))
    total = 0
    with os.fdopen(fd, "rb") as f:
        while True:
            try:
                chunk = f.read(_CHUNK)
            except OSError as e:
                raise SnapshotError(f"{name}: cannot read: {e.strerror or e}") from None
            if not chunk:
                return
            total += len(chunk)
            if total > cap:
                raise SnapshotError(too_large(name, cap))
            yield chunk


def _gunzip(name: str, chunks: Iterator[bytes], *, say_cut: bool = False) -> Iterator[bytes]:
    """``gunzip_limited`` streamed: every member, the same bounds and messages; data cut short at
    the end after a whole line is read up to the cut (``cut_ok``), ``say_cut``: with its warning
    (the first pass only: every pass reads the file again)."""
    cap = LIMITS.max_input_bytes
    out = 0
    newline = False  # a whole line decompressed: a cut at the end loses only what follows it
    d: Any = zlib.decompressobj(16 + zlib.MAX_WBITS)  # None between members
    data = b""
    trailing = False
    while True:
        if not data:
            more = next(chunks, None)
            if more is None:
                break
            data = more
        if trailing:  # after the last member: zero padding is allowed, nothing else
            if data.strip(b"\x00"):
                raise SnapshotError(f"{name}: bad gzip data: trailing garbage after the last member")
            data = b""
            continue
        if d is None:
            if len(data) < len(GZIP_MAGIC):  # the next member's magic may be split
                more = next(chunks, None)
                if more is not None:
                    data += more
                    continue
            if not data.startswith(GZIP_MAGIC):
                trailing = True
                continue
            d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:  # a step at a time: a small chunk may inflate to a giant line
            piece = d.decompress(data, min(_CHUNK, cap + 1 - out))
        except zlib.error as e:
            raise SnapshotError(f"{name}: bad gzip data: {e}") from None
        out += len(piece)
        if out > cap:
            raise SnapshotError(too_large(name, cap) + " (decompressed)")
        if piece:
            newline = newline or b"\n" in piece
            yield piece
        if d.eof:
            data, d = d.unused_data, None
        else:
            data = d.unconsumed_tail  # more of this chunk to inflate, or none
    if d is not None:
        if newline:
            if say_cut:
                warn(f"{name}: {CUT_GZIP}")
            return
        raise SnapshotError(f"{name}: bad gzip data: the compressed data is truncated")


def _bytes(name: str, gz: bool, expect: _Expect) -> Iterator[bytes]:
    """The file's text; a cut at the end is said in the validating pass (pass 2) only."""
    if not gz:
        return _raw(name, expect)
    return _gunzip(name, _raw(name, expect), say_cut=expect.digests is None)


def _check_bytes(name: str, gz_name: bool) -> tuple[int, bool, tuple[int, int]]:
    """Pass 1: the decompressed size and whether the file is gzip, after the whole-file read's
    byte-level checks (same messages, same order); and which file it is."""
    first_pass = _Expect()
    raw = _raw(name, first_pass)
    first = next(raw, b"")
    gz = first.startswith(GZIP_MAGIC)
    if gz_name and not gz:
        raise SnapshotError(f"{name}: not a gzip file (the name ends in .gz)")

    def chunks() -> Iterator[bytes]:
        yield first
        yield from raw

    size = 0
    blank = True
    lines = LineCheck(name, max_line_bytes(), SnapshotError)  # refused before any is decoded
    for piece in (_gunzip(name, chunks()) if gz else chunks()):
        lines.feed(piece)
        size += len(piece)
        if blank and piece and not piece.isspace():
            blank = False
    if blank:  # nothing, or only whitespace
        raise SnapshotError(f"{name}: empty file (expected a snapshot)")
    assert first_pass.identity is not None
    return size, gz, first_pass.identity


# --- lines ------------------------------------------------------------------------------------
def _lines(name: str, chunks: Iterator[bytes]) -> Iterator[tuple[bytes, bool]]:
    """Each line without its newline, and whether it had one (``data.split(b"\\n")``'s segments;
    a BOM opening the file is not part of line 1). A line's pieces are joined once, when its
    newline comes (adding each chunk to one growing buffer copied a long line again for every
    chunk: a 200 MB line took 28 s), and a line longer than
    :func:`~lbctl.safe.files.max_line_bytes` is refused (pass 1 refused it already, unless the
    file changed since)."""
    cap = max_line_bytes()
    parts: list[bytes] = []
    size = 0
    number = 1

    def whole(last: bytes) -> bytes:
        line = b"".join((*parts, last)) if parts else last
        return line[len(_BOM):] if number == 1 and line.startswith(_BOM) else line

    for chunk in chunks:
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if size + end - start > cap:
                raise SnapshotError(line_too_long(name, number, cap))
            line = whole(chunk[start:end])
            parts.clear()
            size = 0
            yield line, True
            number += 1
            start = end + 1
        if start < len(chunk):
            size += len(chunk) - start
            if size > cap:
                raise SnapshotError(line_too_long(name, number, cap))
            parts.append(chunk[start:] if start else chunk)
    yield whole(b""), False


def _parse_lines(name: str, gz: bool, check_keys: bool, *, expect: _Expect
                 ) -> Iterator[ClusterState | None]:
    """``_read_jsonl`` streamed: the same messages, one snapshot at a time. Each line's digest
    is kept in ``expect.seen`` or, when ``expect`` has digests, checked against the next before
    the line is decoded (None: more lines than were validated — the end of the replay)."""
    import hashlib  # here: every snapshot command imports this module, few stream a sequence

    digests = expect.digests
    for number, (line, terminated) in enumerate(_lines(name, _bytes(name, gz, expect)), start=1):
        if not line.strip():
            continue
        where = f"{name}:{number}"
        digest = hashlib.blake2b(line, digest_size=_DIGEST).digest()
        k = expect.count * _DIGEST
        if digests is None:
            expect.seen += digest
        else:
            if k == len(digests):
                yield None
                return
            if digest != digests[k:k + _DIGEST]:
                raise SnapshotError(f"{where}: the file changed while it was replayed (this line "
                                    "is not the one validated)")
        expect.count += 1
        paused = gc.isenabled()
        gc.disable()  # a snapshot's many acyclic containers: no collection in the middle
        try:
            state = jsonl_snapshot(where, line, number, last=not terminated,
                                   check_keys=check_keys)
        except PartialLastLine as e:
            # only the validating pass gets here (the replay ends before a line it did not
            # validate): left out after good lines, as the whole-file read does
            if expect.count == 1 or digests is not None:
                raise
            expect.count -= 1
            del expect.seen[-_DIGEST:]
            warn(e.left_out(expect.count))
            return
        finally:
            if paused:
                gc.enable()
        yield state
