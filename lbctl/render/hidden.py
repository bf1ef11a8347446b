"""The one escaping rule of data output (``-o json``, ``-o yaml``, ``-o jsonl``, JSON lines).

A name from a hostile snapshot or cluster (a broker, tenant, namespace or bundle) can hold a
bidirectional override (U+202E), an isolate (U+2066–U+2069), a zero-width space or a C1 control.
Tables and error lines escape them (:func:`lbctl.safe.text.terminal_safe`); JSON and YAML
encoders escape only C0 and write these raw, so ``-o json`` on a terminal showed a reordered or
hidden name. Data output writes each of them as an escape instead — ``\\u202e`` in JSON,
``"\\u202E"`` in YAML — which every parser reads back as the same character, so no record
changes. The characters are :data:`lbctl.safe.text.HIDDEN_IN_DATA`; JSON's escaper
(:func:`lbctl.safe.text.json_hidden_escaped`, used by :func:`lbctl.render.json_text`) lives beside
them because watch's JSON lines, below render in the layers, use it too. This module is YAML's
half, imported only when YAML is written.
"""

from __future__ import annotations

from typing import Any

import yaml

from lbctl.safe.text import HIDDEN_IN_DATA


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper, but a scalar holding a hidden character is double-quoted and
    written with escapes only (as ``allow_unicode=False`` writes it), so the character shows as
    ``\\u202E``. Every other scalar is written as before: ``allow_unicode`` keeps ``東京-1``."""

    def analyze_scalar(self, scalar: str) -> Any:
        found = super().analyze_scalar(scalar)
        if HIDDEN_IN_DATA.search(scalar) is not None:
            found.allow_flow_plain = found.allow_block_plain = False
            found.allow_single_quoted = found.allow_block = False
        return found

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        if HIDDEN_IN_DATA.search(text) is None:
            super().write_double_quoted(text, split)
            return
        keep = self.allow_unicode
        self.allow_unicode = False
        try:
            super().write_double_quoted(text, split)
        finally:
            self.allow_unicode = keep


def yaml_text(data: Any) -> str:
    """``data`` as YAML (block style, keys in order, Unicode kept), hidden characters escaped."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
