"""``lbctl monitor-brokers``: what ``pulsar-perf monitor-brokers`` shows, from load reports."""
