"""`lbctl sandbox`: a Pulsar-admin-compatible cluster on loopback to try lbctl without a cluster.

It is the test cluster of :mod:`lbctl.sandbox` (many brokers on their own ports over one shared
state; 307 redirects to a bundle's owner; unload and split change ownership and boundaries) with a
ready-made scenario, alive by default (:mod:`lbctl.sandbox.life`: load follows bundles, reports on
Pulsar's cadence, a leader that acts, ``--speed`` and a scenario file of timed events); ``--static``
keeps the fixed figures of earlier releases. It runs in the foreground until Ctrl-C (or SIGTERM) and prints the
``--admin-url`` to give the other commands. By default the first broker listens on port 8080, so
that lbctl's default admin URL (``http://localhost:8080``) reaches it with no flag at all.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer


def sandbox(
    brokers: Annotated[int | None, typer.Option(
        "--brokers", "-n", metavar="N", min=1, max=500,
        help="Brokers to start [default: the scenario's: hot-broker 3, balanced 4, "
             "rolling-restart 6; skewed is always 4].")] = None,
    scenario: Annotated[str, typer.Option(
        "--scenario", "-s", metavar="NAME",
        help="hot-broker, balanced, rolling-restart or skewed (extensible).")] = "hot-broker",
    extensible: Annotated[bool, typer.Option(
        "--extensible", help="Run the extensible load manager (ExtensibleLoadManagerImpl, "
        "TransferShedder) instead of the modular one.")] = False,
    port: Annotated[int, typer.Option(
        "--port", "-p", metavar="PORT", min=0, max=65535,
        help="Port of the first broker (the others follow it); 0 picks free ones.")] = 8080,
    speed: Annotated[float, typer.Option(
        "--speed", metavar="N", min=0.1, max=3600,
        help="Run the cluster's clock N times as fast (reports, cycles, grace periods, "
             "lastUpdate): 60 makes an hour pass in a minute.")] = 1.0,
    timeline: Annotated[Path | None, typer.Option(
        "--timeline", "-t", metavar="FILE.yaml",
        help="A scenario file: the starting cluster and timed events (docs/commands/sandbox.md)."
    )] = None,
    static: Annotated[bool, typer.Option(
        "--static", help="Fixed figures: nothing reacts and no leader acts, so a plan stays valid "
             "until you apply it.")] = False,
    reports_as_written: Annotated[bool, typer.Option(
        "--reports-as-written",
        help="Serve each load report as the broker last wrote it (what the leader decided on: "
             "an exported history replays into its decisions cycle for cycle) instead of "
             "refreshed with the broker's bundles now, as Pulsar's load-report does.")] = False,
) -> None:
    """Start a loopback Pulsar-admin test cluster and keep it running until Ctrl-C.

    Every broker answers the admin REST endpoints lbctl uses (load reports, topic stats, metrics,
    bundles, unload, split, leader, version) from one shared state, so monitor-brokers,
    recommend, explain, brokers, split-bundle and unload can be tried end to end. Nothing leaves
    127.0.0.1.

    \b
    Examples:
      lbctl sandbox            # 3 brokers, the first one hot, on :8080…
      lbctl sandbox --scenario rolling-restart --port 0
      lbctl sandbox --extensible --brokers 5
      lbctl sandbox --speed 60 --timeline day.yaml   # an hour a minute
    """
    import signal
    import threading

    from lbctl.config import closest
    from lbctl.errors import LbctlError, UsageError
    from lbctl.sandbox.scenarios import SCENARIOS, living

    doc: dict[str, object] = {}
    if timeline is not None:
        if static:
            raise UsageError("--timeline runs a living cluster: drop --static")
        from lbctl.sandbox.timeline import read

        doc = read(timeline)
        base = doc.get("base")
        if isinstance(base, str) and scenario == "hot-broker":
            scenario = base
        if brokers is None and isinstance(doc.get("brokers"), int):
            brokers = int(doc["brokers"])  # type: ignore[call-overload]
    chosen = SCENARIOS.get(scenario)
    if chosen is None:
        hint = closest(scenario, SCENARIOS)
        raise UsageError(f"unknown scenario {scenario!r}; choose one of "
                         f"{', '.join(SCENARIOS)}" + (f" (did you mean {hint}?)" if hint else ""))
    n = brokers or chosen.default_brokers
    if port and port + n - 1 > 65535:  # checked before any broker listens
        raise UsageError(f"--port {port} with {n} brokers runs past port 65535: "
                         f"give --port {65536 - n} or less, or --port 0 for free ones")
    try:
        cluster = chosen.start(n, port, alive=not static)
    except OSError as e:
        raise LbctlError(f"cannot listen on 127.0.0.1:{port}"
                         f"{f'-{port + n - 1}' if n > 1 else ''} ({e.strerror or e}); "
                         "choose another --port, or --port 0 for free ones") from None
    # Pulsar's load-report refreshes the broker's bundles (ModularLoadManagerWrapper
    # .generateLoadReport): a split or a move shows at once, lastUpdate stays the last write
    cluster.reports_as_written = reports_as_written
    if extensible and not cluster.extensible:
        cluster.set_extensible(loadBalancerSheddingConditionHitCountThreshold="0")
    life = None
    if not static:
        from lbctl.sandbox.clock import RunningClock

        try:
            seed = doc.get("seed", 1)
            reconnect = doc.get("reconnectSeconds", 1.0)
            life = living(cluster, RunningClock(speed), hosts=str(doc.get("hosts", "mixed")),
                          seed=seed if isinstance(seed, int) else 1,
                          reconnect=float(reconnect) if isinstance(reconnect, int | float) else 1.0,
                          events=doc.get("events"))
        except LbctlError:
            cluster.stop()
            raise
        cluster.keep_alive()
    cluster.keep_scraping()  # a Prometheus API beside it: --prometheus-url reads the sandbox too
    from lbctl.sandbox.prometheus import SCRAPE_INTERVAL

    ids = list(cluster.brokers)
    url = cluster.admin_url
    lm = "extensible (TransferShedder)" if cluster.extensible else "modular (ThresholdShedder)"
    flag = "" if url == "http://127.0.0.1:8080" else f"--admin-url {url} "
    print(f"lbctl sandbox: cluster {cluster.cluster}, {len(ids)} broker(s) on "
          f"127.0.0.1:{_port_list([int(b.rsplit(':', 1)[1]) for b in ids])}")
    print(f"scenario {chosen.name}: {lm} load manager")
    if life is not None and life.leader is not None:
        print(f"alive: clock x{speed:g}, leader {life.leader.broker()} acts every cycle; "
              f"{len(life.events)} timed event(s)")
    print(f"admin URL: {url}")
    # within 80 columns whatever the port (the README's walkthrough is read at 80)
    print(f"Prometheus URL: {url} (scraped every {SCRAPE_INTERVAL:g} s)")
    print("try, in another terminal:")
    for cmd in ("brokers", "monitor-brokers --once", "recommend", "explain",
                f"unload public/default -b {cluster.ranges('public/default')[0]} --dry-run"):
        line = f"  lbctl {flag}{cmd}"
        if len(line) > 78 and " -b " in line:  # keep within 80 columns
            line = line.replace(" -b ", " \\\n      -b ", 1)
        print(line)
    print("Ctrl-C stops it.", flush=True)
    stop = threading.Event()

    def on_term(_sig: int, _frame: object) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_term) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        cluster.stop()
    sys.stderr.write("lbctl sandbox: stopped\n")


def _port_list(ports: list[int]) -> str:
    """``8080-8082`` for consecutive ports; each one otherwise (``--port 0`` picks them apart, and
    a range of two random ports names brokers that do not exist)."""
    if len(ports) > 1 and ports == list(range(ports[0], ports[0] + len(ports))):
        return f"{ports[0]}-{ports[-1]}"
    return ",".join(map(str, ports))
