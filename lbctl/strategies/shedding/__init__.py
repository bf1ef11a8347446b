"""Load-shedding strategies, one module per Pulsar class: the modular ones (``…loadbalance.impl``)
and the extensible load manager's TransferShedder (``…extensions.scheduler``)."""
