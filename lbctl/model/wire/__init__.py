"""lbctl's wire formats, each declared once as typed records used both to write and to read.

* :mod:`~lbctl.model.wire.java` — the Java scalar types of Pulsar's JSON (``double`` rates,
  ``int``/``long`` counts, epoch milliseconds) as ``msgspec`` constraints;
* :mod:`~lbctl.model.wire.snapshot` — ``lbctl/snapshot@1`` (Pulsar's ``LocalBrokerData``,
  ``NamespaceBundleStats``, ``BundleData``, ``BundlesData`` … and lbctl's own sections);
* :mod:`~lbctl.model.wire.plan` — ``lbctl/plan@1``;
* :mod:`~lbctl.model.wire.journal` — one line of the journal of changes;
* :mod:`~lbctl.model.wire.fleet` — the rows of ``lbctl fleet``'s tables;
* :mod:`~lbctl.model.wire.problems` — what a value that does not decode breaks, in lbctl's words
  (its JSON path and what the declaration expects), from the declarations themselves;
  :mod:`~lbctl.model.wire.paths` writes the paths and values of every such message;
* :mod:`~lbctl.model.wire.declared` — the declarations read back (``msgspec.inspect``), for that
  walk and for the Spark schema and checks ``lbctl.fleet.schema`` derives.

A declaration carries its type, its range (``msgspec.Meta``) and the words an error uses
(``Meta(extra={"expected": …})``): decoding checks the first two in C, and only a value that
fails is walked in Python to say where and why. Nothing here imports the rest of lbctl: this is
the lowest layer.
"""
