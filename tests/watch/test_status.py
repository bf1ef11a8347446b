"""What the watcher shows: /metrics (parsed by Prometheus' own promtool when installed), /healthz,
the status page in a real headless browser (Debian's chromium) with a screenshot kept, and a
Grafana dashboard that names only metrics the watcher writes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from lbctl.watch.server import StatusServer
from lbctl.watch.status import METRICS, metrics_text
from tests.sandbox.life_helpers import living_hot
from tests.watch.watch_helpers import Beside

ROOT = Path(__file__).parents[2]
DASHBOARD = ROOT / "docs" / "grafana" / "lbctl-watch.json"
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    c, life, clock = living_hot(3, reconnect=0.0, loadBalancerAutoBundleSplitEnabled="false")
    assert life.leader is not None
    life.leader.fault.stuck = True
    w = Beside(c, life, clock, tmp_path_factory.mktemp("h"), doctor=False,
               grace_ms={"out-of-band": 0})
    w.minutes(12)
    server = StatusServer(("127.0.0.1", 0), lambda: w.watcher.status, w.watcher.healthy,
                          clock=clock.now)
    yield w, server
    server.close()
    w.close()


def _get(url: str):  # type: ignore[no-untyped-def]
    import httpx

    return httpx.get(url)


def test_metrics_name_every_metric_and_each_broker(watched) -> None:  # type: ignore[no-untyped-def]
    w, server = watched
    r = _get(server.url + "/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    for name in METRICS:
        assert f"# TYPE {name} " in text
    for b in w.c.brokers:
        assert f'lbctl_broker_usage_ratio{{broker="{b}"}}' in text
    assert re.search(r'^lbctl_anomalies_active\{kind="out-of-band",severity="critical"\} 1$', text,
                     re.M)
    assert "lbctl_captures_total 12" in text
    promtool = shutil.which("promtool")
    if promtool:
        p = subprocess.run([promtool, "check", "metrics"], input=text.encode(),
                           capture_output=True, timeout=60)
        assert p.returncode == 0, p.stdout + p.stderr


def test_healthz(watched) -> None:  # type: ignore[no-untyped-def]
    _w, server = watched
    r = _get(server.url + "/healthz")
    assert r.status_code == 200 and r.text.startswith("ok: 12 capture(s)")
    assert _get(server.url + "/nope").status_code == 404


def test_before_any_capture_healthz_says_so() -> None:
    assert "# TYPE lbctl_broker_usage_ratio gauge" in metrics_text(None, 0)


def test_the_grafana_dashboard_names_only_metrics_the_watcher_writes() -> None:
    doc = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in doc["panels"] for t in p["targets"]]
    named = {m for e in exprs for m in re.findall(r"\b(lbctl_[a-z_]+)\b", e)}
    assert named and named <= set(METRICS), named - set(METRICS)
    assert set(METRICS) - named <= {"lbctl_broker_leader"}  # every other metric has a panel


@pytest.mark.slow
def test_the_status_page_in_a_headless_browser(watched) -> None:  # type: ignore[no-untyped-def]
    w, server = watched
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--window-size=1000,1100"]
    dom = subprocess.run([*flags, "--dump-dom", server.url + "/"], capture_output=True,
                         timeout=120, text=True)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    for b in w.c.brokers:
        assert f"<code>{b}</code>" in html
    assert 'id="anomalies"' in html and "out-of-band" in html
    assert "<polyline" in html and 'class="usage"' in html
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "watch-status.png"
    shot.unlink(missing_ok=True)
    p = subprocess.run([*flags, f"--screenshot={shot}", server.url + "/"], capture_output=True,
                       timeout=120, text=True)
    assert p.returncode == 0 and shot.stat().st_size > 10_000, p.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _doctor_page() -> str:
    """The page as the sandbox's first captures make it: doctor anomalies whose subject names
    two settings and whose message names fully qualified classes."""
    from lbctl.watch.anomalies import Anomaly
    from lbctl.watch.status import BrokerNow, Status, page_html

    impl = "org.apache.pulsar.broker.loadbalance.impl."
    subject = "loadBalancerLoadSheddingStrategy,loadBalancerLoadPlacementStrategy"
    active = (
        Anomaly("out-of-band:127.0.0.1:8081", "out-of-band", "127.0.0.1:8081", "critical",
                "broker 127.0.0.1:8081 at 59 % (band 37–57 %)", 1, 1),
        Anomaly(f"doctor:shedder-placement-mismatch:{subject}",
                "doctor:shedder-placement-mismatch", subject, "warning",
                f"shedding with ThresholdShedder and placing with LeastLongTermMessageRate "
                f"(loadBalancerLoadSheddingStrategy={impl}ThresholdShedder (runtime "
                f"configuration); loadBalancerLoadPlacementStrategy={impl}"
                f"LeastLongTermMessageRate (default)) Fix: loadBalancerLoadPlacementStrategy="
                f"{impl}LeastResourceUsageWithWeight in broker.conf on every broker", 1, 1),
        Anomaly("doctor:threshold-no-lower-boundary:lowerBoundarySheddingEnabled,"
                "loadBalancerHistoryResourcePercentage", "doctor:threshold-no-lower-boundary",
                "lowerBoundarySheddingEnabled,loadBalancerHistoryResourcePercentage", "info",
                "ThresholdShedder with loadBalancerHistoryResourcePercentage=0.9 (default)", 1, 1))
    brokers = tuple(BrokerNow(f"127.0.0.1:808{i}", 0.5, 10, i == 0) for i in range(3))
    return page_html(Status("test-cluster", 1, brokers, (0.37, 0.57), active, (), 5, 0, 5, 0,
                            ((1, (("127.0.0.1:8080", 0.5),)),)))


def test_an_anomaly_subject_breaks_only_between_names() -> None:
    page = _doctor_page()
    assert ("<code>loadBalancerLoadSheddingStrategy</code>,<wbr>"
            "<code>loadBalancerLoadPlacementStrategy</code>") in page
    assert ('<td><span class="w">doctor</span>:<wbr><span class="w">shedder-placement-mismatch'
            '</span></td>') in page


@pytest.mark.slow
def test_the_page_fits_a_1200_pixel_window_and_keeps_kinds_whole(tmp_path: Path) -> None:
    """Rendered by headless chromium: the anomalies table stayed wider than a 1200 px window (a
    horizontal scroll bar, the messages cut at the edge) and wrapped a kind at its hyphen
    (``doctor:distribute-`` / ``evenly``)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    probe = ("<script>window.onload=function(){var k=document.querySelectorAll('span.w');"
             "var one=true;for(var i=0;i<k.length;i++){if(k[i].getClientRects().length&&"
             "k[i].getClientRects().length>1){one=false}}var p=document.createElement('p');p.id='probe';"
             "p.textContent=document.documentElement.scrollWidth+' '+window.innerWidth+' '+one;"
             "document.body.appendChild(p)}</script>")
    page = tmp_path / "status.html"
    page.write_text(_doctor_page().replace("</body>", probe + "</body>"), encoding="utf-8")
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                          "--disable-dev-shm-usage", "--no-first-run", "--window-size=1200,900",
                          "--dump-dom", page.as_uri()], capture_output=True, timeout=120,
                         text=True)
    assert dom.returncode == 0, dom.stderr[-2000:]
    m = re.search(r'<p id="probe">(\d+) (\d+) (true|false)</p>', dom.stdout)
    assert m, dom.stdout[-2000:]
    assert int(m[1]) <= int(m[2]), f"page {m[1]} px wide in a {m[2]} px window"
    assert m[3] == "true", "a kind wrapped onto a second line"
