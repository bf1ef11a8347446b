"""One module per doctor rule (:func:`lbctl.doctor.base.rule` registers it by id)."""
