"""Modular load-shedding strategies, one module per Pulsar class (``…loadbalance.impl``)."""

from lbctl.strategies.shedding import avg, overload, threshold, uniform

__all__ = ["avg", "overload", "threshold", "uniform"]
