"""Broker versions as ``com.github.zafarkhaja.semver.Version`` reads and orders them, for the
broker-version filters of both load managers (``impl.BrokerVersionFilter`` and
``extensions.filter.BrokerVersionFilter``, ``preferLaterVersions``): ``Version.valueOf`` accepts
only ``MAJOR.MINOR.PATCH[-pre][+build]``, the newest is found with ``BUILD_AWARE_ORDER``, and a
broker is kept when its version ``equals`` the newest (build metadata ignored)."""

from __future__ import annotations

import re

from msgspec import Struct

_SEMVER = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$")


class Version(Struct, frozen=True):
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...] = ()
    build: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> Version:
        m = _SEMVER.match(text)
        if not m:
            raise ValueError(f"invalid version {text!r}")
        pre = tuple(m.group(4).split(".")) if m.group(4) else ()
        build = tuple(m.group(5).split(".")) if m.group(5) else ()
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), pre, build)


def _ids_compare(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """Pre-release / build identifiers: absent ranks above present; numeric below alphanumeric."""
    if a == b:
        return 0
    if not a:
        return 1
    if not b:
        return -1
    for x, y in zip(a, b, strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit() != y.isdigit():
            return -1 if x.isdigit() else 1
        return -1 if x < y else 1
    return -1 if len(a) < len(b) else 1


def compare_versions(a: Version, b: Version) -> int:
    """``Version.BUILD_AWARE_ORDER``."""
    for x, y in ((a.major, b.major), (a.minor, b.minor), (a.patch, b.patch)):
        if x != y:
            return -1 if x < y else 1
    return _ids_compare(a.pre, b.pre) or _ids_compare(a.build, b.build)


def same_version(a: Version, b: Version) -> bool:
    """``Version.equals``: build metadata is ignored."""
    return (a.major, a.minor, a.patch, a.pre) == (b.major, b.minor, b.patch, b.pre)
