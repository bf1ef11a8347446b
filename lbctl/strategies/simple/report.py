"""Java's orders over ``SimpleLoadManagerImpl``'s maps (JDK 17, as :mod:`lbctl.model.javaorder`
models it): ``currentLoadReports`` and the rankings are ``HashMap``s keyed by resource unit
(``http://`` + the broker id); a report's bundle stats a ``HashMap`` copied from the JSON's map
(``LoadReport.setBundleStats``), its bundle names a ``HashSet`` copied from those
(``getBundles``). The iteration orders decide float sums and ties."""

from __future__ import annotations

from collections.abc import Sequence

from lbctl.model.javaorder import JavaHashMap, java_hash_order


# --- orders --------------------------------------------------------------------------------------
def unit(broker: str) -> str:
    """The ``SimpleResourceUnit`` id of a broker (``http://`` + its name)."""
    return "http://" + broker


def reports_order(brokers: Sequence[str]) -> list[str]:
    """``currentLoadReports``' iteration order (a ``HashMap`` keyed by resource unit)."""
    by_unit = {unit(b): b for b in brokers}
    return [by_unit[u] for u in java_hash_order(by_unit)]


def copied_order(keys: Sequence[str], *, set_copy: bool = False) -> list[str]:
    """The order of ``new HashMap<>(map)`` (``LoadReport.setBundleStats``) or, ``set_copy``,
    ``new HashSet<>(keys)`` (``getBundles``: ``HashMap(max(size / .75 + 1, 16))``) over ``keys``
    in the JSON's order — JDK 17, as :class:`~lbctl.model.javaorder.JavaHashMap` models it."""
    if not keys:
        return []
    if set_copy:
        m = JavaHashMap(max(int(len(keys) / 0.75) + 1, 16))
        for k in keys:
            m.put(k)
        return m.keys()
    return JavaHashMap.copy_of(keys).keys()
