"""The running cluster as a :class:`~lbctl.sources.base.StateSource`: one read over the admin
REST API (:class:`lbctl.sources.live.LiveSource`), with the read's options — per-broker topic
stats, namespaces' boundaries — as the source's parameters.

The source opens its admin client when it is read (``connect``: the CLI resolves the connection
flags and client.conf; nothing is contacted before). Commands that do more than read — apply and
drain send requests, doctor reads the dynamic configuration, monitor-brokers refreshes — open a
:meth:`LiveCluster.session`: the client and a reader bound to it, for as long as they need.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from msgspec import Struct

from lbctl.sources.base import Progress, StateRead

if TYPE_CHECKING:
    from lbctl.admin.client import AdminClient
    from lbctl.sources.live import LiveSource
    from lbctl.sources.live_data import LiveRead


class LiveCluster(Struct, frozen=True):
    """The cluster behind an admin client, read now."""

    connect: Callable[[], AbstractContextManager[AdminClient]]
    topics: bool = True  # /broker-stats/topics of every broker
    namespaces: bool = True  # every namespace's bundle boundaries

    @property
    def live(self) -> bool:
        return True

    @property
    def what(self) -> str:
        return "the cluster"

    def read(self, progress: Progress | None = None) -> StateRead:
        with self.session(progress) as reader:
            return read_of(reader.read())

    @contextmanager
    def session(self, progress: Progress | None = None) -> Iterator[LiveSource]:
        """A reader of the cluster on an open client (``reader.client``), closed after."""
        from lbctl.sources.live import LiveSource

        with self.connect() as client:
            yield LiveSource(client, topics=self.topics, namespaces=self.namespaces,
                             progress=progress)


def read_of(read: LiveRead) -> StateRead:
    """A live read as a source's read: the state, the brokers that failed, the conflicts."""
    return StateRead([read.state], tuple(f"{f.broker}: {f.error}" for f in read.failures),
                     tuple(read.warnings))


def on_client(client: AdminClient, *, topics: bool = True, namespaces: bool = True) -> LiveCluster:
    """The cluster behind a client already open (held by its caller, not closed by a read)."""
    from contextlib import nullcontext

    return LiveCluster(lambda: nullcontext(client), topics, namespaces)
