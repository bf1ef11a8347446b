"""Modular placement strategies, one module per Pulsar class (``…loadbalance.impl``)."""

from lbctl.strategies.placement import (
    least_long_term_message_rate,
    least_resource_usage_with_weight,
    round_robin,
)

__all__ = [
    "least_long_term_message_rate",
    "least_resource_usage_with_weight",
    "round_robin",
]
