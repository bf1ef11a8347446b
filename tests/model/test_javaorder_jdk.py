"""The Java hash-order model against the JDK itself.

A few lines of plain JDK code (``java/MapOrder.java``: no Pulsar, no Guava) are compiled and run
once; random key sets of 1–200 broker and bundle names, put in random orders (with removals and
``clear()`` in some cases), are replayed by the JDK's ``HashMap``, ``HashSet``,
``ConcurrentHashMap`` and ``Collectors.toMap`` and by :mod:`lbctl.model.javaorder`, and the
iteration orders must be identical. The ``HashMap(16)`` / ``HashMap(17)`` cases are the backing
maps of Guava's ``ArrayListMultimap.create()`` (``Maps.capacity(12)`` from Guava 32 / up to 31.1,
which is why the model's 16 and 32 buckets are checked this way, without Guava).

Skips, with the reason shown by ``pytest -rs``, when no JDK (``javac``/``java``) is on the PATH.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lbctl.model.javaorder import (
    ConcurrentOrder,
    JavaConcurrentHashMap,
    MapHistory,
    concurrent_order,
    guava_expected_size_capacity,
    hashmap_order,
    java_hash_order,
    multimap_key_order,
)

JAVA = Path(__file__).parent / "java" / "MapOrder.java"
needs_jdk = pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")),
                               reason="no JDK on the PATH (javac/java): the order model is only "
                                      "checked against the model's own tests")


def broker_name(rng: random.Random) -> str:
    i = rng.randrange(300)
    return rng.choice([
        f"broker-{i}.pulsar.svc:8080",
        f"pulsar-broker-{i}.pulsar-broker.pulsar.svc.cluster.local:8080",
        f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}:8080",
        f"ip-10-0-{rng.randrange(256)}-{rng.randrange(256)}.ec2.internal:8443",
    ])


def bundle_name(rng: random.Random) -> str:
    tenant = rng.choice(["public", "acme", "t1", "pulsar", "my-tenant"])
    ns = rng.choice(["default", "orders", "events", "system", "functions"])
    lo = rng.randrange(0, 1 << 31)
    hi = min(lo + rng.randrange(1, 1 << 30), 0xFFFFFFFF)
    return f"{tenant}/{ns}/0x{lo:08x}_0x{hi:08x}"


def key_set(rng: random.Random) -> list[str]:
    n = rng.randint(1, 200)
    make = rng.choice([broker_name, bundle_name, lambda r: rng.choice([broker_name,
                                                                        bundle_name])(r)])
    keys: dict[str, None] = {}
    while len(keys) < n:
        keys[make(rng)] = None
    out = list(keys)
    rng.shuffle(out)
    return out


@dataclass
class Case:
    """One script: a map, puts in a random order, maybe removals / clear, and what the model
    predicts for it."""

    id: str
    lines: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)


def make_case(rng: random.Random, i: int) -> Case:
    keys = key_set(rng)
    kind = rng.choice(["chm", "chm", "chm-lazy", "chm-history", "hashmap", "hashset", "tomap",
                       "guava16", "guava32", "reused"])
    c = Case(f"{kind}-{i}")
    if kind in ("chm", "chm-lazy"):
        c.lines.append("NEW\tchm")
        model = JavaConcurrentHashMap()
        removed: list[str] = []
        for k in keys:
            c.lines.append(f"PUT\t{k}")
            model.put(k)
        if kind == "chm" and rng.random() < 0.3:
            removed = rng.sample(keys, rng.randint(0, len(keys) // 3))
            for k in removed:
                c.lines.append(f"REM\t{k}")
                model.remove(k)
        c.expected = model.keys()
        if kind == "chm-lazy":  # the per-bucket replay must give the same order
            lazy = ConcurrentOrder(keys, exact_limit=0)
            c.expected = [k for b in range(lazy.capacity) for k in lazy.bucket(b)]
            assert c.expected == concurrent_order(keys)
    elif kind == "chm-history":  # the leader's bundleData across cycles: bundles come and go
        c.lines.append("NEW\tchm")
        history = MapHistory()
        for _ in range(rng.randint(2, 4)):
            ops = [(k, True) for k in rng.sample(keys, rng.randint(0, len(keys)))]
            live = list(history.live)
            ops += [(k, False) for k in rng.sample(live, rng.randint(0, len(live)))]
            history = history.then(ops)
        c.lines += [f"{'PUT' if put else 'REM'}\t{k}" for k, put in history.ops]
        lazy = ConcurrentOrder((), exact_limit=0, history=history)  # per-bucket replay
        c.expected = [k for b in range(lazy.capacity) for k in lazy.bucket(b)]
    elif kind == "hashmap":
        c.lines.append("NEW\thashmap")
        c.lines += [f"PUT\t{k}" for k in keys]
        c.expected = hashmap_order(keys)
        assert c.expected == java_hash_order(keys)
    elif kind == "hashset":
        c.lines.append("NEW\thashset")
        c.lines += [f"PUT\t{k}" for k in keys]
        c.expected = hashmap_order(keys)  # HashSet is a HashMap underneath
    elif kind == "tomap":  # LoadData.getBundleDataForLoadShedding: toMap over the CHM
        c.lines.append("NEW\tchm")
        c.lines += [f"PUT\t{k}" for k in keys]
        c.lines.append("TOMAP")
        c.expected = hashmap_order(concurrent_order(keys))
    elif kind in ("guava16", "guava32"):  # ArrayListMultimap.create()'s backing HashMap
        buckets = 16 if kind == "guava16" else 32
        cap = guava_expected_size_capacity(12, buckets)
        c.lines.append(f"NEW\thashmap\t{cap}")
        c.lines += [f"PUT\t{k}" for k in keys]
        c.expected = multimap_key_order(keys, buckets)[0]
        assert c.expected == hashmap_order(keys, cap)
    else:  # a multimap cleared and reused (the shedders' field): the table keeps its length
        first = key_set(rng)
        c.lines.append("NEW\thashmap\t16")
        c.lines += [f"PUT\t{k}" for k in first]
        c.lines.append("CLEAR")
        c.lines += [f"PUT\t{k}" for k in keys]
        _, grown = multimap_key_order(first, 16)
        c.expected = multimap_key_order(keys, 16, grown)[0]
    c.lines.append(f"PRINT\t{c.id}")
    return c


@pytest.fixture(scope="module")
def jdk_run(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    build = tmp_path_factory.mktemp("java")
    subprocess.run(["javac", "-d", str(build), str(JAVA)], check=True, capture_output=True)

    def run(script: list[str]) -> dict[str, list[str]]:
        res = subprocess.run(["java", "-cp", str(build), "MapOrder"], input="\n".join(script),
                             capture_output=True, text=True, check=True, encoding="utf-8")
        out = {}
        for line in res.stdout.splitlines():
            cid, *keys = line.split("\t")
            out[cid] = keys
        return out

    return run


@needs_jdk
def test_order_model_matches_the_jdk(jdk_run) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(20260316)
    cases = [make_case(rng, i) for i in range(600)]
    java = jdk_run([line for c in cases for line in c.lines])
    wrong = [c.id for c in cases if java[c.id] != c.expected]
    assert not wrong, f"{len(wrong)} of {len(cases)} orders differ from the JDK: {wrong[:10]}"
    # the check has teeth: the old bucket-then-insertion rule for ConcurrentHashMap is wrong on
    # many of these maps (a resize reverses part of a bucket)
    lazy = [c for c in cases if c.id.startswith("chm-lazy")]
    naive_wrong = sum(1 for c in lazy if java[c.id] != _bucket_then_insertion(c))
    assert naive_wrong > len(lazy) // 4


def _bucket_then_insertion(c: Case) -> list[str]:
    keys = [line.split("\t", 1)[1] for line in c.lines if line.startswith("PUT\t")]
    return java_hash_order(keys, capacity=ConcurrentOrder(keys).capacity)


@needs_jdk
def test_the_issues_statefulset_cluster(jdk_run) -> None:  # type: ignore[no-untyped-def]
    """Twelve ``pulsar-broker-N.pulsar-broker.pulsar.svc.cluster.local:8080`` brokers: the
    ``ConcurrentHashMap`` has just resized (at the 12th key) and one bucket came out reversed."""
    brokers = [f"pulsar-broker-{i}.pulsar-broker.pulsar.svc.cluster.local:8080"
               for i in range(12)]
    java = jdk_run(["NEW\tchm", *[f"PUT\t{b}" for b in brokers], "PRINT\tsts"])["sts"]
    assert java == concurrent_order(brokers)
    assert java != _bucket_then_insertion(Case("x", [f"PUT\t{b}" for b in brokers]))
