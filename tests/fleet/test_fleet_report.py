"""The report's bounce-backs found among the moves alone (:func:`lbctl.fleet.report.bounced`) equal
the definition on every sample: a move whose new owner owned the bundle in one of the previous
2 … ``window`` samples (what ten ``lag`` columns computed before; pandas only, no Spark)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.fleet.report import bounced


def by_definition(owners: list[str], window: int) -> list[tuple[int, bool]]:
    """(position, bounced) of every move of one bundle's owner sequence (positions from 1)."""
    out = []
    for i in range(1, len(owners)):
        if owners[i] != owners[i - 1]:
            back = any(owners[i - k] == owners[i] for k in range(2, window + 1) if i - k >= 0)
            out.append((i + 1, back))
    return out


def moves_of(histories: dict[tuple[str, str], list[str]]) -> tuple[Any, list[bool]]:
    import pandas as pd

    rows, expected = [], []
    for (cluster, bundle), owners in sorted(histories.items()):
        for pos, back in by_definition(owners, WINDOW):
            rows.append((cluster, bundle, pos, owners[pos - 2], owners[pos - 1]))
            expected.append(back)
    frame = pd.DataFrame(rows, columns=["cluster", "bundle", "pos", "from_broker", "to_broker"])
    return frame, expected


WINDOW = 4

owners = st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=14)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.dictionaries(st.tuples(st.sampled_from(["c1", "c2"]), st.sampled_from(["x", "y", "z"])),
                       owners, max_size=5))
def test_bounces_from_the_moves_equal_the_lag_definition(histories) -> None:
    frame, expected = moves_of(histories)
    assert list(bounced(frame, WINDOW)) == expected


def test_a_return_beyond_the_window_is_no_bounce_and_within_it_is() -> None:
    # a owns 1-2, b 3-6, back to a at 7: a was owner 5 samples before (lag 5) — within 10, not 4
    history = {("c", "x"): ["a", "a", "b", "b", "b", "b", "a"]}
    frame, _ = moves_of(history)
    assert list(bounced(frame, 10)) == [False, True]
    assert list(bounced(frame, 4)) == [False, False]
    assert list(bounced(frame.iloc[:0], 10)) == []


# --------------------------------------------------------------------------------------------
# moves, bounce-backs and per-sample counts from the per-stretch segments (report.from_segments)
# --------------------------------------------------------------------------------------------
FLAGS = ("over_split", "oversized", "unsplittable")


def places_of(snaps: Any, stretch: int) -> Any:
    """Each snapshot's place (``report._stretched``, in pandas): stretch and offset in it."""
    places = snaps.sort_values(["cluster", "captured_at"]).reset_index(drop=True)
    rn = places.groupby("cluster").cumcount()
    places["stretch"], places["offset"] = rn // stretch, rn % stretch
    return places


def segments_of(rows: Any, places: Any) -> Any:
    """What the report's Spark aggregation gives for ``rows`` (one per bundle sample: cluster,
    bundle, captured_at, broker, flags), written again in pandas: one row per (cluster, bundle,
    stretch, broker), in no particular order."""
    import numpy as np

    r = rows.merge(places, on=["cluster", "captured_at"])
    r["bit"] = np.left_shift(1, r["offset"].to_numpy(dtype=np.int64))
    for c in FLAGS:
        r[f"{c}_bit"] = r["bit"].where(r[c] > 0, 0)
    g = r.groupby(["cluster", "bundle", "stretch", "broker"])
    segs = g.agg(n=("bit", "size"), t0=("captured_at", "min"), t1=("captured_at", "max"),
                 mask=("bit", "sum"), **{f"{c}_mask": (f"{c}_bit", "sum") for c in FLAGS},
                 **{c: (c, "sum") for c in FLAGS}, max_share=("share", "max"),
                 max_rate=("share", "max"), max_tput=("share", "max"),
                 max_topics=("topics", "max")).reset_index()
    return segs.sample(frac=1, random_state=1).reset_index(drop=True)


# a bundle's owner per sample of its cluster (None: absent from that snapshot)
history = st.lists(st.sampled_from(["a", "b", "c", None]), min_size=1, max_size=30)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.dictionaries(st.tuples(st.sampled_from(["c1", "c2"]), st.sampled_from(["x", "y", "z"])),
                       history, min_size=1, max_size=5),
       st.sampled_from([1, 2, 4, 64]), st.randoms(use_true_random=False))
def test_moves_and_counts_from_the_segments_equal_the_lag_definition(histories, stretch,
                                                                     rnd) -> None:
    """Cut into stretches of 1, 2, 4 or 64 samples, with owners coming back inside a stretch
    and bundles absent from some samples: the moves (time, old and new owner, bounce-back), the
    per-bundle counts and the per-sample counts of bundles and flagged bundles equal the
    definition on every sample (``lag`` 1 … ``window`` over the bundle's own samples)."""
    import pandas as pd

    from lbctl.fleet import report as R

    rows, want_moves = [], []
    for (cluster, bundle), owners in sorted(histories.items()):
        present = [(i, o) for i, o in enumerate(owners) if o is not None]
        for i, o in present:
            flags = [rnd.randint(0, 1) for _ in FLAGS]
            rows.append((cluster, bundle, 1000 * (i + 1), o, *flags, rnd.random(),
                         rnd.randint(1, 3)))
        seq = [o for _, o in present]
        for pos, back in by_definition(seq, WINDOW):
            want_moves.append((cluster, bundle, 1000 * (present[pos - 1][0] + 1), seq[pos - 2],
                               seq[pos - 1], back))
    frame = pd.DataFrame(rows, columns=["cluster", "bundle", "captured_at", "broker", *FLAGS,
                                        "share", "topics"])
    if frame.empty:
        return
    # every cluster's 30 snapshots, also those where none of these bundles was present
    places = places_of(pd.DataFrame([(c, 1000 * (i + 1)) for c in ("c1", "c2") for i in range(30)],
                                    columns=["cluster", "captured_at"]), stretch)
    saved = R.STRETCH
    R.STRETCH = stretch
    try:
        pb, moves, per_sample = R.from_segments(segments_of(frame, places), places,
                                                R.ReportOptions(bounce_window=WINDOW))
    finally:
        R.STRETCH = saved
    got = sorted(moves[["cluster", "bundle", "captured_at", "from_broker", "to_broker",
                        "bounced"]].itertuples(index=False, name=None))
    assert got == sorted(want_moves)
    counts = frame.groupby(["cluster", "bundle"]).agg(samples=("broker", "size"),
                                                     first_seen=("captured_at", "min"))
    per = pb.set_index(["cluster", "bundle"]).sort_index()
    assert per["samples"].tolist() == counts["samples"].tolist()
    assert per["first_seen"].tolist() == counts["first_seen"].tolist()
    assert per["moved"].tolist() == [sum(m[:2] == k for m in want_moves) for k in per.index]
    by_sample = frame.groupby(["cluster", "captured_at"]).agg(
        bundles=("broker", "size"), **{c: (c, "sum") for c in FLAGS}).reset_index()
    got_sample = per_sample.merge(places, on=["cluster", "stretch", "offset"])
    got_sample = got_sample[["cluster", "captured_at", "bundles", *FLAGS]].sort_values(
        ["cluster", "captured_at"]).reset_index(drop=True)
    assert got_sample.values.tolist() == by_sample.values.tolist()
