"""Hardening primitives every layer uses: local files read and written safely (:mod:`.files`:
regular files only, size caps, atomic writes, crash-safe appends) and text safe to print
(:mod:`.text`: control characters escaped, messages bounded)."""
