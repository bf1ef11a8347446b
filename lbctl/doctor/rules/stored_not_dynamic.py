"""``stored-not-dynamic``: a load-balancer setting stored in the dynamic configuration that is not
dynamic, so no broker applies it.

The metadata store's ``/admin/configuration`` node (``GET /admin/v2/brokers/configuration/values``,
a snapshot's ``dynamicConfig``) may hold a key whose ``ServiceConfiguration`` field is not
``@FieldContext(dynamic = true)``: ``BrokersBase`` refuses to store one (412), so it was written into
the store directly, or by a release where the field was dynamic. A broker applies a stored value
in ``BrokerService.configValueChanged``, at start (``updateConfigurationAndRegisterListeners`` →
``handleDynamicConfigurationUpdates``) and on every change of the node alike, and that method
skips a key missing from ``dynamicConfigurationMap`` (the dynamic fields only): the broker runs
broker.conf's value, whatever the store says (apache/pulsar ``BrokerService`` at a7015a32).
Older brokers applied any stored ``@FieldContext`` key at start (``updateDynamicServiceConfiguration``,
as in 2.10.1), but never on a change; lbctl models the current behaviour
(:func:`lbctl.config.resolve` ignores such a key). ``delete-dynamic-config`` refuses a key that is
not dynamic too (``BrokersBase.internalDeleteDynamicConfigurationOnMetadataAsync``, 412), so the
way out is an edit of the node itself.
"""

from __future__ import annotations

from collections.abc import Iterator

from lbctl.config import SETTINGS_BY_NAME
from lbctl.doctor.base import Finding, Rule, Severity, rule
from lbctl.doctor.context import Context


@rule("stored-not-dynamic", Severity.WARNING,
      title="A setting stored in the dynamic configuration that is not dynamic: never applied",
      source="BrokerService.configValueChanged, BrokersBase",
      why="brokers apply a stored value only to a field ServiceConfiguration marks dynamic "
          "(BrokerService.configValueChanged skips any other, at start and on every change), so "
          "the cluster runs broker.conf's value while the dynamic configuration says otherwise "
          "to whoever reads it.",
      fix="set the value in broker.conf on every broker with a rolling restart if it is wanted, "
          "and remove the key from the metadata store's /admin/configuration node "
          "(`pulsar-admin brokers delete-dynamic-config` refuses a key that is not dynamic)")
def check(ctx: Context, r: Rule) -> Iterator[Finding]:
    for key, value in ctx.dynamic.items():
        setting = SETTINGS_BY_NAME.get(key)
        if setting is None or setting.dynamic:
            continue
        yield r.finding(
            f"{key}={value} is stored in the dynamic configuration, but {key} is not dynamic: "
            f"the brokers run {ctx.shown(key)}",
            fix=f"{ctx.set_fix(key, value)} if that value is wanted; remove {key} from the "
                "metadata store's /admin/configuration node (delete-dynamic-config answers 412 "
                "for a key that is not dynamic)",
            settings=(key,))
