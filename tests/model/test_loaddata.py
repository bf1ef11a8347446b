"""``BundleDataView`` (lbctl.model.loaddata): a lookup table iterated in the leader's put order."""

from __future__ import annotations

from lbctl.model.load import BundleData
from lbctl.model.loaddata import BundleDataView
from tests.factories import stats


def test_a_view_given_an_order_iterates_in_it_and_looks_up_in_the_table() -> None:
    """``order`` (the put order of ``ModularLoadManagerImpl.updateBundleData``, kept apart from
    the reader's table in the snapshot's order) is what the view iterates, what it materialises
    for the next cycle, and what its keys compare as; lookups, length and first samples are the
    table's."""
    names = [f"t/ns-{i}/0x00000000_0xffffffff" for i in range(6)]
    table = {b: stats(i + 1) for i, b in enumerate(reversed(names))}
    view = BundleDataView(table, order=tuple(names))
    plain = BundleDataView({b: table[b] for b in names})
    assert list(view) == names == list(plain) and list(table) != names
    assert len(view) == 6 and "nope" not in view and view.get("nope") is None
    assert list(view.materialized().items()) == list(plain.materialized().items())
    assert view.keys() == plain.keys() and view.first_samples_only()
    assert view[names[0]] == BundleData.first_sample(table[names[0]])
    assert view.reported() is table
