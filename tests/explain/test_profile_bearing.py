"""Which release variants ``explain`` shows as bearing on a cycle (:data:`lbctl.explain.profile.
BEARING`): the ``selectCandidateMap`` variant (``ExtensibleLoadManagerImpl.selectAsync`` copies
the registry into a ``HashMap`` in 3.0.0, a ``ConcurrentHashMap`` from 3.0.1, PR #20666) bears
only when a placement preview ran with more than one candidate."""

from __future__ import annotations

from lbctl.explain.profile import BEARING, Cycle, bearing, profile_lines
from lbctl.loadmanager.select import Options, run
from lbctl.model.cycle import ExtensibleCycle
from lbctl.records import replace
from lbctl.sources.snapshot import read_snapshots
from lbctl.versions import Variant, profile_for
from tests.paths import EXAMPLES

SKEWED = EXAMPLES / "extensible" / "skewed.json"
UNLOAD = {"loadBalancerTransferEnabled": "false"}


def _cycle(overrides: dict[str, str] | None = None, version: str = "3.0.0") -> ExtensibleCycle:
    states = read_snapshots([SKEWED])
    c = run(states, Options(overrides=overrides, pulsar_version=version,
                               assume_steady=True))[-1]
    assert isinstance(c, ExtensibleCycle)
    return c


def _variant() -> Variant:
    return next(v for v, _ in profile_for("3.0.0").differences() if v.name == "selectCandidateMap")


def _shown(c: Cycle) -> bool:
    return any(line.startswith("  selectCandidateMap = ") for line in profile_lines(c))


def test_the_variant_has_a_bearing_test() -> None:
    assert "selectCandidateMap" in BEARING


def test_shown_when_a_preview_chose_among_several_brokers() -> None:
    c = _cycle(UNLOAD)
    assert any(a.preview is not None and len(a.preview.candidates) > 1 for a in c.actions)
    assert bearing(c, _variant())
    assert _shown(c)


def test_not_shown_when_transfers_ran_no_preview() -> None:
    """Transfer mode: TransferShedder names each destination, selectAsync does not run."""
    c = _cycle()
    assert c.actions and all(a.preview is None for a in c.actions)
    assert not bearing(c, _variant())
    assert not _shown(c)
    assert any(line.startswith("  selectCandidateMap = ")
               for line in profile_lines(c, full=True))  # --profile still lists it


def test_not_shown_when_every_preview_had_one_candidate_or_none() -> None:
    """With one candidate (or none) a HashMap and a ConcurrentHashMap iterate alike."""
    c = _cycle(UNLOAD)
    for keep in (1, 0):
        one = replace(c, actions=tuple(
            replace(a, preview=replace(a.preview, candidates=tuple(a.preview.candidates)[:keep]))
            if a.preview is not None else a for a in c.actions))
        assert not bearing(one, _variant()), keep
        assert not _shown(one), keep
    first = c.actions[0].preview
    assert first is not None
    mixed = replace(c, actions=(replace(c.actions[0], preview=replace(
        first, candidates=tuple(first.candidates)[:1])), *c.actions[1:]))
    assert bearing(mixed, _variant())  # one preview with a choice is enough


def test_not_in_a_release_that_copies_into_a_concurrent_map() -> None:
    """3.0.1 on: the newest's behaviour, no difference to show at all."""
    c = _cycle(UNLOAD, version="3.0.1")
    assert not _shown(c)
    assert not any(line.startswith("  selectCandidateMap = ")
                   for line in profile_lines(c, full=True))
