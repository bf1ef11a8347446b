"""Pure data: bundle ranges and hashing, broker and bundle load, cluster state. No I/O."""
