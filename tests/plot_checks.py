"""Checks on a drawn plot file (imported as a plain module, like paths.py): a real PNG of the
expected size with something drawn on it, read back with matplotlib's own image reader."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def read_png(path: Path, *, min_width: int = 400, min_height: int = 300) -> Any:
    """The image's pixels, after checking the header, the size it declares and that it is not a
    blank canvas (the colours vary)."""
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= min_width and height >= min_height, (width, height)
    import matplotlib.image as mpimg

    pixels = mpimg.imread(path)
    assert pixels.shape[:2] == (height, width)
    assert pixels.reshape(-1, pixels.shape[-1]).std(axis=0).max() > 0.05
    return pixels
