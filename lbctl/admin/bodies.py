"""An answer's body read within a size cap, inflated here: one reader for both HTTP clients.

Why not httpx's own decoding: it inflates a whole network read at once, so a 2 MiB gzip bomb read
in one piece became 2 GiB in memory before a cap was looked at. Here the compressed stream is fed
to zlib a piece at a time, asking for no more output than the cap leaves, and the cap counts
decoded bytes (the admin client's and the Prometheus client's ``--max-response-size``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


async def read_capped(r: Any, cap: int, noun: str, error: Callable[[str], Exception]) -> bytes:
    """The body of the httpx response ``r`` (streamed, not read yet), at most ``cap`` bytes once
    decoded; ``error(words)`` makes the exception for a body over the cap, an unsupported or
    broken encoding (``noun`` names the body in those words: "response", "answer")."""
    import zlib

    from lbctl.safe.files import human_size

    def too_big() -> Exception:
        return error(f"the {noun} is larger than {human_size(cap)} (raise --max-response-size)")

    if r.is_stream_consumed:  # an answer made in memory (a mock transport): already decoded
        if len(r.content) > cap:
            raise too_big()
        return bytes(r.content)
    coding = r.headers.get("content-encoding", "").strip().lower()
    inflate: Any = None
    if coding in ("gzip", "x-gzip"):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif coding == "deflate":
        inflate = zlib.decompressobj()
    elif coding not in ("", "identity"):
        raise error(f"unsupported content-encoding {coding[:40]!r}")
    declared = r.headers.get("content-length", "")
    if inflate is None and declared.isascii() and declared.isdigit() and int(declared) > cap:
        raise too_big()
    out = bytearray()
    try:
        async for piece in r.aiter_raw():
            if inflate is None:
                out += piece
            else:
                out += inflate.decompress(piece, cap + 1 - len(out))
                if inflate.unconsumed_tail:
                    raise too_big()
            if len(out) > cap:
                raise too_big()
        if inflate is not None:
            out += inflate.flush()
            if not inflate.eof:
                raise error(f"the compressed {noun} is truncated")
    except zlib.error:
        raise error(f"the compressed {noun} is corrupt") from None
    if len(out) > cap:
        raise too_big()
    return bytes(out)
