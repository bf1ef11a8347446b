"""Table lengths a kept ``HashMap`` carries from fill to fill, and its order, against the JDK.

JDK 17 ``HashMap.putVal`` calls ``treeifyBin`` when a chain reaches 9 keys; below 64 buckets
(``MIN_TREEIFY_CAPACITY``) that *resizes* the table instead, so 9 colliding names grow a 16-bucket
table to 32 while the size (9) is far below 3/4 of it, and ``clear()`` keeps the longer table for
the next fill. lbctl carries such lengths for ``brokerCandidateCache``, the thread-local
scratch sets of ``applyNamespacePolicies``, the shedders' reused ``ArrayListMultimap`` and
``BundleSplitterTask.bundleCache``; :func:`lbctl.model.javaorder.hash_fill` gives the order and
the length a fill leaves. ``java/TableFills.java`` (plain JDK, no Pulsar: one ``HashMap``
cleared and refilled, its table length read by reflection) runs as one process per module and
answers one script per example (hypothesis). Skipped, with the reason shown by ``pytest -rs``,
without ``javac``/``java``."""

from __future__ import annotations

import itertools
import subprocess
from collections.abc import Callable, Iterator, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lbctl.config import Settings
from lbctl.loadmanager.modular import _auto_splits
from lbctl.model.javaorder import (
    ConcurrentOrder,
    JavaConcurrentHashMap,
    MapHistory,
    cleared_capacity,
    hash_fill,
    java_hash_order,
    java_string_hash,
    multimap_key_order,
    refill_fill,
    spread,
    table_size_for,
)
from lbctl.strategies.split.bundle_splitter_task import find_bundles_to_split
from tests.factories import broker, load, state, stats
from tests.jdk import JAVA_DIR, needs_jdk

pytestmark = needs_jdk("carried table lengths are not checked against HashMap")

#: 32 broker names with one hashCode ("Aa" and "BB" hash alike, and so do names that differ
#: only by such blocks of the same length): one bucket in every table
SAME = [f"broker-{''.join(p)}.pulsar.svc:8080" for p in itertools.product(["Aa", "BB"], repeat=5)]


def _mates(mask: int, n: int, seed: str) -> list[str]:
    """``n`` names in one bucket of a ``mask + 1`` table, their hashes distinct (a resize
    can part them)."""
    by_bucket: dict[int, list[str]] = {}
    for i in itertools.count():
        name = f"{seed}-{i}.pulsar.svc:8080"
        mates = by_bucket.setdefault(spread(java_string_hash(name)) & mask, [])
        mates.append(name)
        if len(mates) == n:
            return mates
    raise AssertionError("unreachable")


#: colliding names, names sharing a bucket of 16 or of 64 by chance, and plain ones
POOL = SAME + _mates(15, 14, "m16") + _mates(63, 12, "m64") + [f"plain-{i}:8080"
                                                                 for i in range(40)]

Script = Callable[[Sequence[str]], dict[str, tuple[int, list[str]]]]


@pytest.fixture(scope="module")
def jdk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Script]:
    """One ``java`` process for the module: each call sends a script, then ``END``."""
    build = tmp_path_factory.mktemp("tablefills")
    subprocess.run(["javac", "-d", str(build), str(JAVA_DIR / "TableFills.java")], check=True,
                   capture_output=True)
    proc = subprocess.Popen(["java", "--add-opens", "java.base/java.util=ALL-UNNAMED",
                             "--add-opens", "java.base/java.util.concurrent=ALL-UNNAMED", "-cp",
                             str(build), "TableFills"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, encoding="utf-8")
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def run(lines: Sequence[str]) -> dict[str, tuple[int, list[str]]]:
        stdin.write("\n".join([*lines, "END"]) + "\n")
        stdin.flush()
        out: dict[str, tuple[int, list[str]]] = {}
        while (line := stdout.readline().rstrip("\n")) != "END":
            assert line, "TableFills ended early"
            cid, length, *keys = line.split("\t")
            out[cid] = (int(length), keys)
        return out

    yield run
    stdin.close()
    proc.wait(timeout=30)
    stdout.close()


def _script(initial: int | None, fills: Sequence[Sequence[str]]) -> list[str]:
    lines = ["NEW" if initial is None else f"NEW\t{initial}"]
    for i, keys in enumerate(fills):
        lines += ["CLEAR", *(f"PUT\t{k}" for k in keys), f"PRINT\t{i}"]
    return lines


def _ours(initial: int | None, fills: Sequence[Sequence[str]]) -> list[tuple[int, list[str]]]:
    """``hash_fill`` carrying each fill's length to the next, as the load manager does."""
    table = 0 if initial is None else table_size_for(initial)
    out = []
    for keys in fills:
        order, table = hash_fill(keys, table)
        out.append((table, order))
    return out


fills_strategy = st.lists(st.lists(st.sampled_from(POOL), unique=True, max_size=60),
                          min_size=1, max_size=5)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.sampled_from([None, 1, 2, 12, 16, 17, 32, 64]), fills_strategy)
def test_fills_of_a_kept_map_match_the_jdk(jdk: Script, initial: int | None,
                                           fills: list[list[str]]) -> None:
    """Random sequences of fills of one cleared ``HashMap`` (fresh, or presized as Guava's
    multimap and ``new HashSet<>(n)`` presize): every fill's order and the table length it
    leaves are the JDK's."""
    java = jdk(_script(initial, fills))
    put = False
    for i, (length, order) in enumerate(_ours(initial, fills)):
        put = put or bool(fills[i])
        # before the first put a presized map has no table yet, only the length it will make
        assert (length if put else 0, order) == java[str(i)], i


def test_a_long_chain_below_64_buckets_doubles_the_kept_table(jdk: Script) -> None:
    """9 colliding names in a fresh map: the 9th put makes a chain of 9 in 16 buckets, which
    resizes to 32 (size 9, far below 12); the 10th resizes to 64 and the 11th makes a tree bin.
    The next fill, 12 plain names, then comes in 32 or 64 buckets, not in the 16 the counts
    alone (``cleared_capacity``, what lbctl carried before) give."""
    plain = [f"plain-{i}:8080" for i in range(40)]
    later = [n for n in plain if java_hash_order([n], capacity=16) == [n]][:12]
    for n, expected in ((8, 16), (9, 32), (10, 64), (11, 64)):
        java = jdk(_script(None, [SAME[:n], later]))
        ours = _ours(None, [SAME[:n], later])
        assert [java["0"][0], java["1"][0]] == [expected, expected] == [ours[0][0], ours[1][0]]
        assert java["1"][1] == ours[1][1]
        assert cleared_capacity(0, n) == 16  # the counts alone
    # teeth: the second fill's order in the carried 32 buckets is not its order in 16
    assert jdk(_script(None, [SAME[:9], later]))["1"][1] != java_hash_order(later, capacity=16)


def _refill_script(fill: Sequence[str], kept: set[str], again: Sequence[str],
                   later: Sequence[str]) -> list[str]:
    """A cleared set filled, the keys not in ``kept`` removed in its iteration order, ``again``
    put back without ``clear()`` (selectBroker's restore / re-check), then the next fill."""
    order = hash_fill(fill)[0]
    return (["NEW", "CLEAR", *(f"PUT\t{k}" for k in fill),
             *(f"REM\t{k}" for k in order if k not in kept),
             *(f"PUT\t{k}" for k in again), "PRINT\tr",
             "CLEAR", *(f"PUT\t{k}" for k in later), "PRINT\tn"])


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(POOL), unique=True, min_size=1, max_size=40), st.data())
def test_a_refill_without_clear_leaves_the_jdks_table(jdk: Script, fill: list[str],
                                                      data: st.DataObject) -> None:
    """The refill's order and the table it leaves, and the next fill's order from that table,
    are the JDK's (colliding names among the fills, so that a put back raises a chain to 9)."""
    kept = set(data.draw(st.lists(st.sampled_from(fill), unique=True)))
    again = data.draw(st.permutations(fill))
    later = data.draw(st.lists(st.sampled_from(POOL), unique=True, max_size=30))
    java = jdk(_refill_script(fill, kept, again, later))
    order, grown = refill_fill(fill, 0, kept, again)
    assert (grown, order) == java["r"]
    assert hash_fill(later, grown)[::-1] == tuple(java["n"])


def test_a_put_back_that_remakes_a_chain_of_9_grows_the_kept_table(jdk: Script) -> None:
    """9 colliding brokers grow a fresh set to 32 (treeifyBin below 64 buckets resizes);
    the filters remove 2 (a chain of 7), and the restore puts them back: the 9th put of the
    chain resizes again, to 64, a growth the fill alone does not make. The set keeps 64 for
    the next fill, which then orders 12 plain brokers in 64 buckets, not in the fill's 32."""
    fill = SAME[:9]
    kept = set(fill[2:])
    later = [f"plain-{i}:8080" for i in range(12)]
    java = jdk(_refill_script(fill, kept, fill, later))
    order, grown = refill_fill(fill, 0, kept)
    assert (hash_fill(fill)[1], grown) == (32, 64)
    assert (grown, order) == java["r"]
    assert (64, hash_fill(later, grown)[0]) == java["n"]
    assert hash_fill(later, 32)[0] != java["n"][1]  # the fill's table orders them otherwise


@st.composite
def _brokers(draw: st.DrawFn) -> list[str]:
    """A cycle's brokers with a selection: a few colliding names among plain ones, so that
    a chain of 9 often comes before 3/4 of the table is used."""
    same = draw(st.lists(st.sampled_from(SAME), unique=True, max_size=14))
    rest = draw(st.lists(st.sampled_from(POOL[len(SAME):]), unique=True, max_size=20))
    return draw(st.permutations(same + rest)) or [POOL[-1]]


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.sampled_from([16, 32]), st.lists(_brokers(), min_size=1, max_size=5))
def test_a_reused_multimap_carries_the_length_its_chains_grew(
        jdk: Script, buckets: int, fills: list[list[str]]) -> None:
    """The shedders' reused ``ArrayListMultimap`` (a ``HashMap`` presized by ``Maps.capacity(12)``:
    17 → 32 buckets up to Guava 31.1, 16 from 32.0), cleared each cycle: every cycle's broker order
    and the length carried to the next are the JDK's."""
    java = jdk(_script(17 if buckets == 32 else 16, fills))
    reused = 0
    for i, keys in enumerate(fills):
        order, reused = multimap_key_order(keys, buckets, reused)
        assert (reused, order) == java[str(i)], i


def test_the_split_checks_carry_the_table_their_colliding_bundles_grew(jdk: Script) -> None:
    """``BundleSplitterTask.bundleCache`` (a field ``HashMap``, cleared at each check): 9 hot
    bundles of namespaces whose names collide ("Aa"/"BB") make a chain of 9 in 16 buckets, so
    the table the next cycle's check starts from is 32 (the JDK's, same puts), not the 16 the
    count gives; the splits come in the order of that map."""
    spaces = [f"t/{''.join(p)}" for p in itertools.product(["Aa", "BB"], repeat=4)][:9]
    hot = {f"{ns}/0x00000000_0x40000000": stats(40000, topics=5) for ns in spaces}
    st = state({"b1:8080": broker(bundles=hot),
                "b2:8080": broker(bundles={"t/x/0x40000000_0x80000000": stats(10, topics=2)})})
    ld = load(st.brokers)
    settings = Settings.defaults()
    puts = [c.bundle for c in find_bundles_to_split(ld, settings, st.namespace_bundle_count)
            if c.selected]
    assert sorted(puts) == sorted(hot)
    splits, kept = _auto_splits(st, ld, settings, None, 0)
    java = jdk(_script(None, [puts]))["0"]
    assert (kept, [s.candidate.bundle for s in splits]) == java
    assert kept == 32 and cleared_capacity(0, len(puts)) == 16


@st.composite
def _history(draw: st.DrawFn) -> list[tuple[str, bool]]:
    """Cycles of a leader's ``ConcurrentHashMap`` of bundle data: puts of new names, removals of
    some present ones (bundles split, unloaded or gone), colliding names among them."""
    ops: list[tuple[str, bool]] = []
    live: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        puts = draw(st.lists(st.sampled_from(POOL), unique=True, max_size=50))
        ops += [(k, True) for k in puts]
        live += [k for k in puts if k not in live]
        gone = draw(st.lists(st.sampled_from(live), unique=True, max_size=len(live))) \
            if live else []
        ops += [(k, False) for k in gone]
        live = [k for k in live if k not in gone]
    return ops


@settings(derandomize=True, max_examples=200, deadline=None)
@given(_history())
def test_a_concurrent_map_with_colliding_names_and_removals(
        jdk: Script, ops: list[tuple[str, bool]]) -> None:
    """``LoadData``'s ``ConcurrentHashMap`` s live as long as the leader: names come and go, and
    colliding ones make tree bins (``TreeBin``), grow a table below 64 buckets 8-fold at once
    (``tryPresize``), and untreeify as they leave. The full model, the per-bucket replay
    lbctl uses on large maps (:class:`ConcurrentOrder` over a :class:`MapHistory`) and its
    table length are the JDK's."""
    java = jdk(["CHM", *(f"{'PUT' if put else 'REM'}\t{k}" for k, put in ops), "PRINT\tm"])
    length, order = java["m"]
    model = JavaConcurrentHashMap()
    for k, put in ops:
        if put:
            model.put(k)
        else:
            model.remove(k)
    assert model.keys() == order
    history = MapHistory().then(ops)
    lazy = ConcurrentOrder((), exact_limit=0, history=history)
    if order:
        assert lazy.capacity == length
        assert [k for b in range(lazy.capacity) for k in lazy.bucket(b)] == order
