"""Pure strategies: shedding, placement (and, later, split), registered by Pulsar's names."""
