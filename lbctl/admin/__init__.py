"""The admin REST API of Pulsar: one client (:mod:`.client`, the only httpx importer), auth,
client.conf and errors. Nothing is imported here so that the CLI's startup stays light."""
