"""The simulator's bundle-data sampling is bit-identical to ``BundleData.update``."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.model.load import BundleData
from lbctl.simulate.sampling import sample, sample_all
from tests.factories import stats

rates = st.floats(min_value=0, max_value=1e9, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(rates, rates, rates, rates), min_size=1, max_size=30))
def test_sample_equals_bundle_data_update(samples) -> None:
    ref = BundleData.first_sample(stats(*samples[0]))
    ours = ref
    for s in samples[1:] * 3:  # past the 10-sample short window
        ns = stats(*s, topics=3)
        ref = ref.update(ns)
        ours = sample(ours, ns)
        assert ours == ref


def test_steady_traffic_shares_unchanged_windows_and_drops_unreported_bundles() -> None:
    s = stats(1.0, 2.0, 4096.0, 8192.0, topics=2)  # exact: ((n - 1) x + x) / n == x
    data = sample_all({}, {"a": s, "b": s})
    for _ in range(12):
        prev = data
        data = sample_all(data, {"a": s})
    assert set(data) == {"a"}
    assert data["a"].shortTermData.numSamples == 10
    assert data["a"].longTermData.numSamples == 13
    assert data["a"].shortTermData is prev["a"].shortTermData  # full and unchanged: shared
    ref = BundleData.first_sample(s)
    for _ in range(12):
        ref = ref.update(s)
    assert data["a"] == ref


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=40))
def test_steady_memo_never_changes_the_figures(picks) -> None:
    # three stats objects, one exactly representable (steady windows), reused in any order
    pool = [stats(1.0, 2.0, 4096.0, 8192.0), stats(0.1, 0.2, 0.3, 0.7), stats(3.0, 5.0, 7.0, 11.0)]
    memo: dict = {}
    ours = {"b": BundleData.first_sample(pool[0])}
    ref = ours["b"]
    for p in picks * 4:
        ours = sample_all(ours, {"b": pool[p]}, memo)
        ref = ref.update(pool[p])
        assert ours["b"] == ref
