"""Placement strategies and broker filters, one module per Pulsar class: the modular ones
(``…loadbalance.impl``: LeastLongTermMessageRate, LeastResourceUsageWithWeight,
RoundRobinBrokerSelector and ``selectBroker``'s filters) and the extensible load manager's
(``…extensions.strategy.LeastResourceUsageWithWeight``, ``…extensions.filter``)."""
