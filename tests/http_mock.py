"""respx for the tests of lbctl's admin client: one router whose routes answer any httpx client,
whatever its transport.

respx's default mocker patches httpcore, httpx's default transport; the admin client has a
transport of its own (lbctl/admin/transport.py), so these tests use respx's ``httpx`` mocker,
which answers at the client (``AsyncClient._transport_for_url``) before any transport runs. Use it
as ``respx.mock`` is used: ``@mock`` on a test, ``mock.get(url).mock(...)`` inside (the routes
are dropped when the test ends).
"""

from __future__ import annotations

import respx

mock = respx.mock(using="httpx", assert_all_called=False)
