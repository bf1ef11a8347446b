"""lbctl: understand and steer Apache Pulsar broker load balancing."""

__version__ = "0.1.0"
