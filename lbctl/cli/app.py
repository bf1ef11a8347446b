"""The root `lbctl` command: global options and one line per subcommand."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl import __version__
from lbctl.cli import explain, recommend, snapshot

app = typer.Typer(
    name="lbctl",
    help="Understand and steer Apache Pulsar broker load balancing.",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"lbctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool,
        typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Understand and steer Apache Pulsar broker load balancing."""


app.command("recommend")(recommend.recommend)
app.command("explain")(explain.explain)
app.add_typer(snapshot.app, name="snapshot")


def main() -> None:
    app(prog_name="lbctl")
