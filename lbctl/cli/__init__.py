"""The thin Typer layer: one module per subcommand, no algorithm here."""
