"""One cluster clock per admin client (:mod:`lbctl.admin.clock`), fed by every answer: the
``Date`` of each (RFC 9110 §6.6.1), and the sandbox's ``X-Lbctl-Sandbox-Clock`` from loopback hosts
only, which gives the time and the speed at once. apply's speed (``cluster_speed``) moves only with
that header: a real cluster's clock, however skewed its ``Date``, leaves apply's windows as long as
they were."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest

from lbctl.admin.client import CLUSTERS, SANDBOX_CLOCK_HEADER, AdminClient, call
from lbctl.admin.clock import CLOSE_S, ClusterClock

httpx = pytest.importorskip("httpx")


def _answering(date: str | None, sandbox: str | None = None) -> object:
    """A transport that answers every request with ``[]`` and these clock headers."""
    headers = {"content-type": "application/json"}
    if date is not None:
        headers["date"] = date
    if sandbox is not None:
        headers[SANDBOX_CLOCK_HEADER] = sandbox
    return httpx.MockTransport(lambda _req: httpx.Response(200, content=b"[]", headers=headers))


def test_every_answers_date_feeds_the_clients_clock_not_its_speed() -> None:
    """A real cluster ten minutes ahead: an ordinary endpoint's ``Date`` (no opting in) moves
    the clock's time; the speed stays one."""
    skew = 600.0
    client = AdminClient("https://pulsar.example.com:8443", backoff=0,
                         transport=_answering(formatdate(time.time() + skew, usegmt=True)))
    assert client.cluster_speed() == 1 and client.clock.at(1000.0) == 1000.0  # nothing heard
    with client:
        client.json(call(CLUSTERS))
        now = time.time()
        assert client.clock.at(now) == pytest.approx(now + skew, abs=1.5)
        assert client.clock.local(now + skew) == pytest.approx(now, abs=1.5)
        assert client.cluster_speed() == 1


def test_a_date_within_two_seconds_is_the_local_clock() -> None:
    client = AdminClient("https://pulsar.example.com:8443", backoff=0,
                         transport=_answering(formatdate(time.time(), usegmt=True)))
    with client:
        client.json(call(CLUSTERS))
        assert client.clock.samples  # heard
        now = time.time()
        assert client.clock.at(now) == now


def test_a_remote_sandbox_header_is_not_believed_for_speed_or_time() -> None:
    """Only a loopback host may say it is a sandbox: a remote one's header changes nothing."""
    client = AdminClient("https://pulsar.example.com:8443", backoff=0,
                         transport=_answering(None, f"now={time.time() + 86400:.3f}; speed=60"))
    with client:
        client.json(call(CLUSTERS))
        now = time.time()
        assert client.cluster_speed() == 1 and client.clock.sandbox is None
        assert client.clock.at(now) == now


def test_a_loopback_sandbox_header_gives_time_and_speed_at_once() -> None:
    start = time.time() + 3600
    client = AdminClient("http://127.0.0.1:8080", backoff=0,
                         transport=_answering(None, f"now={start:.3f}; speed=60"))
    with client:
        client.json(call(CLUSTERS))
        heard = client.clock.sandbox
        assert heard is not None and client.cluster_speed() == 60
        local = heard[0]
        # one answer is enough: no five seconds of Date samples to measure a rate over
        assert client.clock.rate() == 60
        assert client.clock.at(local + 2) == pytest.approx(start + 120)
        assert client.clock.local(start + 120) == pytest.approx(local + 2)


def test_a_stepped_sandbox_clock_is_read_from_its_date() -> None:
    """``speed=0`` (a stepped test clock): speed one, and the time from the ``Date``."""
    t0 = 1_767_225_600.0
    c = ClusterClock(lambda: 1000.0)
    c.heard(1000.0, formatdate(t0, usegmt=True), f"now={t0:.3f}; speed=0")
    assert c.speed() == 1 and c.rate() == 1
    assert c.at(1010.0) == pytest.approx(t0 + 10.5)


def test_a_repeated_date_is_one_sample_and_the_rate_still_spans_five_seconds() -> None:
    """Every answer feeds the clock, hundreds a capture: one sample per distinct ``Date`` keeps
    the samples spanning more than :data:`lbctl.admin.clock.SPAN_S`, so a cluster whose Date runs
    at the local rate stays on the local clock."""
    c = ClusterClock()
    for i in range(2000):  # 20 answers each local 10 ms, for 40 s
        local = 5000.0 + i * 0.02
        c.heard(local, formatdate(int(local) + 1000, usegmt=True))
    assert len(c.samples) == 40
    assert c.rate() == 1.0
    assert abs(c.at(5040.0) - (5040.0 + 1000.5)) <= 1 + CLOSE_S / 4


def test_a_date_running_fast_moves_the_time_never_apply_speed() -> None:
    """A real cluster whose ``Date`` runs sixty times as fast (a broken host clock): the watcher
    follows it, apply's windows do not stretch (only the loopback sandbox header may)."""
    c = ClusterClock()
    for i in range(8):
        c.heard(1000.0 + i, formatdate(1_000_000 + 60 * i, usegmt=True))
    assert c.rate() == pytest.approx(60.0)
    assert c.at(1007.5) == pytest.approx(1_000_000 + 60 * 7.5)
    assert c.speed() == 1


def test_a_date_from_another_broker_than_the_admin_url_is_not_a_sample() -> None:
    """Per-broker requests (``base``: a broker's own URL) answer with that broker's clock, which
    may disagree with the admin URL's by seconds: two clocks' samples read as one clock running
    fast or slow (here a broker ten minutes ahead, its answers over more than the 5 s span).
    Only the admin URL's answers date the cluster."""
    skew = 600.0

    def answer(req: httpx.Request) -> httpx.Response:
        ahead = skew if req.url.host == "broker-2.example.com" else 0.0
        return httpx.Response(200, content=b"[]", headers={
            "content-type": "application/json",
            "date": formatdate(time.time() + ahead, usegmt=True)})

    client = AdminClient("https://pulsar.example.com:8443", backoff=0,
                         transport=httpx.MockTransport(answer))
    client.trust_brokers(["broker-2.example.com:8443"])
    with client:
        client.json(call(CLUSTERS, base="https://broker-2.example.com:8443"))
        assert not client.clock.samples  # another broker's clock: not heard
        client.json(call(CLUSTERS))
        now = time.time()
        assert client.clock.at(now) == now  # the admin URL's clock agrees with ours
        assert client.cluster_speed() == 1
