"""``lbctl watch``: the long-running side — history, the leader checked against its own rules,
anomalies, notifications, metrics, a status page and approved healing.

Cruise Control gives Kafka operators a load monitor that keeps history, an anomaly detector with a
grace period, notifications, self-healing per anomaly and proposals waiting for review; this
package gives a Pulsar cluster the same, in Pulsar's terms, reading the cluster through lbctl's one
live state source and replaying lbctl's own load managers over what it recorded.
"""
