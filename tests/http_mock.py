"""respx for the tests of lbctl's admin client: one router whose routes answer any httpx client,
whatever its transport.

respx's default mocker patches httpcore, httpx's default transport; the admin client has a
transport of its own (lbctl/admin/transport.py), so these tests use respx's ``httpx`` mocker,
which answers at the client (``AsyncClient._transport_for_url``) before any transport runs. Use it
as ``respx.mock`` is used: ``@mock`` on a test, ``mock.get(url).mock(...)`` inside (the routes
are dropped when the test ends).

A plain GET on the admin client's own wire skips the httpx client
(``AdminClient._plain_get``: the bytes httpx would build, written by the wire itself), so it
would never meet the routes: while the router is on, every request is built and sent by httpx.
That path is covered against real servers (tests/admin/test_admin_transport.py and the live
tests), and its bytes against httpx's (tests/admin/test_admin_plain_get.py).
"""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import respx

from lbctl.admin.client import AdminClient


class _Router(respx.MockRouter):
    """respx's router, with the admin client's plain GETs sent through httpx while it runs."""

    def start(self) -> None:
        self._through_httpx = patch.object(AdminClient, "_plain_get", return_value=None)
        self._through_httpx.start()
        super().start()

    def stop(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().stop(*args, **kwargs)
        finally:
            self._through_httpx.stop()


mock = _Router(using="httpx", assert_all_called=False)
