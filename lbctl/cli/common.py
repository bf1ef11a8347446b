"""What every command shares: option types and output.

Errors are not handled here: a command body raises, and the root group maps every failure to one
line and an exit code (:mod:`lbctl.cli.failures`).
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from lbctl.cli.groups import OptionGroup
from lbctl.render import FORMATS, Renderable, render
from lbctl.render.display import Display, colour_wanted, terminal_width, using

if TYPE_CHECKING:
    from lbctl.loadmanager.select import Options

#: ``-o/--output`` choices: the formats of :data:`lbctl.render.FORMATS`, ``table`` first
OutputFormat = StrEnum("OutputFormat", [(name, name) for name in FORMATS])  # type: ignore[misc]  # built at run time
TABLE = OutputFormat("table")  # the default everywhere


def _strategies(incomplete: str) -> list[str]:
    from lbctl.cli.complete import strategies

    return strategies(incomplete)


def _placements(incomplete: str) -> list[str]:
    from lbctl.cli.complete import placements

    return placements(incomplete)


Output = Annotated[
    OutputFormat,
    typer.Option("-o", "--output", help="Output format.", case_sensitive=False),
]
Strategy = Annotated[
    str | None,
    typer.Option("--strategy", metavar="NAME", autocompletion=_strategies,
                 help="Shedding strategy (short or fully qualified class name); "
                 "default: the snapshot's loadBalancerLoadSheddingStrategy."),
]
Placement = Annotated[
    str | None,
    typer.Option("--placement", metavar="NAME", autocompletion=_placements,
                 help="Placement strategy; default: the snapshot's "
                 "loadBalancerLoadPlacementStrategy."),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", metavar="KEY=VALUE",
                 help="Override a load-balancer setting (repeatable), e.g. "
                 "--set lowerBoundarySheddingEnabled=true."),
]
BrokerConf = Annotated[
    Path | None,
    typer.Option("--broker-conf", metavar="FILE", help="A Pulsar broker.conf whose load-balancer settings apply."),
]
Seed = Annotated[
    int | None,
    # Pulsar picks among equally good brokers at random (ThreadLocalRandom in
    # LeastLongTermMessageRate, LeastResourceUsageWithWeight): lbctl seeds its pick (walk21)
    typer.Option("--seed", metavar="N", help="Seed for the pick among equally good brokers, which "
                 "Pulsar makes at random; default 0, so a run repeats its picks."),
]
PulsarVersion = Annotated[
    str | None,
    typer.Option("--pulsar-version", metavar="X.Y[.Z]",
                 help="The Pulsar release whose defaults and code to model; default: the version "
                 "the snapshot's brokers report (brokerVersionString), else the newest known "
                 "(see docs/versions.md)."),
]
AssumeSteady = Annotated[
    bool,
    typer.Option("--assume-steady",
                 help="Treat the (first) snapshot as a state that has lasted: replay earlier cycles "
                 "of it first (hit counts, usage history), instead of the leader's first sight."),
]
Watch = Annotated[
    bool,
    typer.Option("--watch", help="Live: follow the leader, refreshing every --interval seconds and "
                 "carrying the strategy's memory across refreshes (first cycles: warming up)."),
]
Interval = Annotated[
    float | None,
    typer.Option("--interval", metavar="SECONDS", min=1.0,
                 help="--watch: seconds between refreshes (default: the shedding interval, "
                 "loadBalancerSheddingIntervalMinutes)."),
]
Count = Annotated[
    int | None,
    typer.Option("--count", metavar="N", min=1, help="--watch: stop after N refreshes."),
]
AllCycles = Annotated[
    bool,
    typer.Option("--all-cycles", help="Show every cycle of a sequence, not only the last."),
]
Wide = Annotated[
    bool,
    typer.Option("--wide", help="Tables: full broker names and no fitting to the terminal width."),
]
NoColor = Annotated[
    bool,
    typer.Option("--no-color", help="Tables: no colour (none either when NO_COLOR is set or the "
                 "output is not a terminal)."),
]


def display(*, wide: bool = False, no_color: bool = False) -> Display:
    """What the table format may assume about stdout (:mod:`lbctl.render.display`)."""
    return Display(width=terminal_width(), wide=wide,
                   color=colour_wanted(sys.stdout, no_color=no_color))


def emit(result: Renderable, fmt: OutputFormat, *, wide: bool = False,
         no_color: bool = False) -> None:
    with using(display(wide=wide, no_color=no_color)):
        render(result, fmt.value, sys.stdout)
    sys.stdout.flush()


# --- option groups (lbctl.cli.groups): one parameter per kind of input ----------------------------

class Shown(OptionGroup, frozen=True):
    """``-o --wide --no-color``: how a result is printed."""

    output: Output = TABLE
    wide: Wide = False
    no_color: NoColor = False

    def emit(self, result: Renderable) -> None:
        emit(result, self.output, wide=self.wide, no_color=self.no_color)


class LoadManagerChoice(OptionGroup, frozen=True):
    """``--strategy --placement --set --broker-conf --seed --pulsar-version --assume-steady``: which
    load manager runs, with which settings (:class:`lbctl.loadmanager.select.Options`)."""

    strategy: Strategy = None
    placement: Placement = None
    set_: SetOpt = None
    broker_conf: BrokerConf = None
    seed: Seed = None
    pulsar_version: PulsarVersion = None
    assume_steady: AssumeSteady = False

    def options(self, *, live: bool = False, project: bool = False) -> Options:
        """The choice as the load manager takes it. A bad ``--set`` (malformed, an unknown key, a
        value of the wrong type) is a usage error here, before the command reads or sends
        anything: ``drain`` used to read the live cluster first and fail on it afterwards."""
        from lbctl.config import parse_assignments, resolve
        from lbctl.errors import UsageError
        from lbctl.loadmanager.select import Options

        for flag, value in (("--strategy", self.strategy), ("--placement", self.placement),
                            ("--pulsar-version", self.pulsar_version)):
            if value is not None and not value.strip():
                # an empty value (an unset shell variable: --strategy "$S") was taken as no flag
                raise UsageError(f"{flag}: empty; give a value or leave the flag out")
        overrides = parse_assignments(self.set_ or [])
        resolve(None, None, overrides)  # strict for --set: raises UsageError
        return Options(self.strategy, self.placement, overrides,
                       self.broker_conf, self.seed, self.pulsar_version, self.assume_steady,
                       live=live, project=project)


class Watching(OptionGroup, frozen=True):
    """``--watch --interval --count``: follow a live leader, refresh after refresh."""

    watch: Watch = False
    interval: Interval = None
    count: Count = None

    @property
    def asked(self) -> bool:
        """Any of the three given (``--interval`` and ``--count`` alone are a mistake)."""
        return self.watch or self.interval is not None or self.count is not None
