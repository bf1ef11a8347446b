"""``LoadReport.getSortedBundleStats`` against the JDK: the report's bundle stats copied into a
``HashMap`` (``setBundleStats``), then put into a ``TreeMap`` whose
``NamespaceBundleStatsComparator`` never answers 0 (Pulsar master 160e6f8d) — the orders of
:func:`lbctl.strategies.simple.report.copied_order` and ``sorted_bundles`` (its
:class:`~lbctl.strategies.simple.treemap.TreeMap`) must equal the JDK's, ties and near-ties (within 100 msg/s) included.

A few lines of plain JDK code (``java/SortedStats.java``); skipped without ``javac``/``java``.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from lbctl.model.load import LocalBrokerData, NamespaceBundleStats
from lbctl.strategies.simple.decide import sorted_bundles
from lbctl.strategies.simple.report import copied_order

JAVA = Path(__file__).parent / "java" / "SortedStats.java"
needs_jdk = pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")),
                               reason="no JDK on the PATH (javac/java)")


def _case(rng: random.Random) -> dict[str, float]:
    n = rng.randint(1, 40)
    names = {f"{rng.choice(['acme', 'public', 'property/cluster'])}/ns{rng.randrange(9)}/"
             f"0x{rng.randrange(1 << 31):08x}_0x{rng.randrange(1 << 31, 1 << 32):08x}"
             for _ in range(n)}
    # rates on a coarse grid: many exact ties and many within the 100 msg/s threshold
    return {b: float(rng.choice([0, 50, 100, 150, 10000, 10050, 10200, rng.randrange(20000)]))
            for b in names}


@needs_jdk
def test_sorted_bundle_stats_match_the_jdk(tmp_path: Path) -> None:
    subprocess.run(["javac", "-d", str(tmp_path), str(JAVA)], check=True, capture_output=True)
    rng = random.Random(20261127)
    cases = {str(i): _case(rng) for i in range(300)}
    script = []
    for cid, rates in cases.items():
        script += [f"CASE\t{cid}", *(f"KEY\t{b}\t{r!r}" for b, r in rates.items()), "END"]
    res = subprocess.run(["java", "-cp", str(tmp_path), "SortedStats"], input="\n".join(script),
                         capture_output=True, text=True, check=True, encoding="utf-8")
    wrong = []
    for line in res.stdout.splitlines():
        cid, *rest = line.split("\t")
        cut = rest.index("|")
        java_hash, java_tree = rest[:cut], rest[cut + 1:]
        rates = cases[cid]
        local = LocalBrokerData(lastStats={b: NamespaceBundleStats(msgRateOut=r)
                                           for b, r in rates.items()})
        if copied_order(list(rates)) != java_hash or sorted_bundles(local, "CPU") != java_tree:
            wrong.append(cid)
    assert len(res.stdout.splitlines()) == len(cases)
    assert not wrong, f"{len(wrong)} of {len(cases)} differ from the JDK: {wrong[:10]}"
