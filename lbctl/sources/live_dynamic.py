"""A live cluster's dynamic configuration: the settings changed with ``pulsar-admin brokers
update-dynamic-config``, which every broker applies without a restart and keeps across restarts
(they live in the metadata store, ``/admin/configuration``).

``GET /admin/v2/brokers/configuration/values`` (``BrokersBase.getAllDynamicConfigurations``)
answers a JSON object of key → string value; its values are already in the runtime configuration
(``…/configuration/runtime``) — what this adds is *which* settings came from there, so that a
finding can say so and name ``delete-dynamic-config`` as the way back. Read-only; nothing is
decided here.
"""

from __future__ import annotations

from lbctl.admin.client import DYNAMIC_CONFIG_VALUES, AdminClient, call
from lbctl.admin.errors import HttpError


def read_dynamic_config(client: AdminClient) -> dict[str, str]:
    """Key → value of every dynamic setting set in the cluster (values as strings)."""
    return stored_values(client.json(call(DYNAMIC_CONFIG_VALUES)))


def stored_values(raw: object) -> dict[str, str]:
    """The answer of ``GET /admin/v2/brokers/configuration/values`` as key → string value (a
    live read asks for it beside the runtime configuration, :meth:`lbctl.sources.live.
    LiveSource.discover`)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise HttpError("GET /admin/v2/brokers/configuration/values: expected a JSON object")
    return {str(k): _text(v) for k, v in raw.items() if v is not None}


def _text(value: object) -> str:
    """Pulsar answers strings; a ``true`` or ``5`` from elsewhere keeps its JSON form (``true``,
    not Python's ``True``), which is what a restore sends back."""
    if isinstance(value, str):
        return value
    import orjson

    return orjson.dumps(value).decode()
