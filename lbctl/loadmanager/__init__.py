"""The load managers around the strategies: Pulsar's modular and extensible ones, behind one
protocol (:mod:`.base`), and which one serves a request (:mod:`.select`)."""
