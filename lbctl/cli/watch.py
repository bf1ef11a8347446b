"""`recommend --watch` / `explain --watch`: follow a live leader, refresh after refresh.

Each refresh reads the cluster, runs the load manager's cycle on it with the memory carried from
the previous refreshes (:class:`lbctl.loadmanager.clock.Follower`: the cycles that elapsed in
between are replayed on the earlier state, as for a snapshot sequence), and prints the result.
Until lbctl has followed as many cycles as the strategy's memory needs
(:func:`~lbctl.loadmanager.clock.warm_up_cycles`), each result says it is warming up: hit counts and
usage averages are still shorter than the leader's.

Kept apart from the commands so that they stay declarations of options.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import typer

from lbctl.cli.common import OutputFormat, Watching, emit
from lbctl.cli.state import StateArgs, choose
from lbctl.loadmanager.select import Options
from lbctl.records import replace
from lbctl.render import Renderable


def check_watch(watching: Watching, given: StateArgs) -> None:
    """``--watch`` follows the live cluster: no snapshot, no Prometheus range; ``--interval`` and
    ``--count`` only with it."""
    from lbctl.errors import UsageError

    if given.files:
        raise UsageError("--watch follows a live cluster: give no snapshot")
    if given.history.given:
        raise UsageError("--watch follows a live cluster: give no --prometheus-url")
    if not watching.watch:
        raise UsageError("--interval and --count go with --watch")


def run_watch(ctx: typer.Context, opts: Options, view: Callable[[Any], Renderable],
              output: OutputFormat, watching: Watching, given: StateArgs) -> None:
    """Refresh until ``--count`` refreshes (or Ctrl-C, which ends the watch without an error)."""
    from lbctl.cli.connection import warn
    from lbctl.config import read_broker_conf
    from lbctl.loadmanager import select
    from lbctl.loadmanager.clock import Follower, interval_ms, warm_up_cycles
    from lbctl.loadmanager.select import profile_of, settings_for, version_warnings
    from lbctl.render import to_json_line

    check_watch(watching, given)
    interval, count = watching.interval, watching.count
    cluster = choose(ctx)  # the live cluster, read at every refresh
    conf_file = read_broker_conf(opts.broker_conf) if opts.broker_conf else {}
    opts = replace(opts, live=False)  # warming up says it instead of "no history"
    follower: Follower | None = None
    n = 0
    try:
        while True:
            started = time.monotonic()
            states = cluster.read().states
            state = states[-1]
            profile, _ = profile_of(states, opts)
            settings = settings_for(state, opts, conf_file, profile)
            # the load manager is built from its own copy of the settings (what it reads of them
            # is not what the cycle read, which the plan lists)
            lm = select.choose(states, opts, settings_for(state, opts, conf_file, profile),
                        warnings=version_warnings(states, opts))
            if follower is None or lm.kind != follower.lm.kind:
                if follower is not None:
                    warn("the load manager changed: following it afresh")
                follower = Follower(lm, assume_steady=opts.assume_steady)
            result = follower.step(state, settings)
            elapsed = replace(result.elapsed, followed=follower.cycles,
                              warm_up=warm_up_cycles(result.shedding, settings))
            result = replace(result, elapsed=elapsed)
            shown = view(result)
            if output.value == "json":
                sys.stdout.write(to_json_line(shown.to_data()) + "\n")
            else:
                if output.value == "table":
                    sys.stdout.write(f"=== refresh {n + 1} at {state.captured_at_iso}"
                                     + (" — warming up" if elapsed.warming_up else "") + " ===\n")
                emit(shown, output)
            sys.stdout.flush()
            n += 1
            if count is not None and n >= count:
                return
            pause = interval if interval is not None else interval_ms(settings) / 1000
            time.sleep(max(0.0, pause - (time.monotonic() - started)))
    except KeyboardInterrupt:
        return
