"""Global connection options (pulsar-admin's names) and the helpers live commands share.

The root command takes them, before the subcommand as with pulsar-admin::

    lbctl --admin-url https://pulsar:8443 --auth-plugin AuthenticationToken \\
          --auth-params file:///etc/pulsar/admin.jwt monitor-brokers --once

They are only stored here; a client.conf is read and httpx imported when a command actually talks
to a cluster, so ``lbctl --help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lbctl.admin.clientconf import ConnectionOptions

if TYPE_CHECKING:
    from lbctl.admin.client import AdminClient
    from lbctl.model.cluster import ClusterState

_P = "Connection (pulsar-admin options)"

AdminUrl = Annotated[str | None, typer.Option(
    "--admin-url", metavar="URL", rich_help_panel=_P,
    help="Admin service URL (client.conf webServiceUrl; default http://localhost:8080).")]
AuthPlugin = Annotated[str | None, typer.Option(
    "--auth-plugin", metavar="CLASS", rich_help_panel=_P,
    help="AuthenticationToken, AuthenticationTls, AuthenticationOAuth2 or AuthenticationBasic "
         "(short or fully qualified).")]
AuthParams = Annotated[str | None, typer.Option(
    "--auth-params", metavar="PARAMS", rich_help_panel=_P, show_default=False,
    help="Plugin parameters, e.g. token:… or file:///path/to/token (never printed).")]
TlsTrustCertPath = Annotated[str | None, typer.Option(
    "--tls-trust-cert-path", metavar="FILE", rich_help_panel=_P, help="CA certificates (PEM).")]
TlsAllowInsecure = Annotated[bool | None, typer.Option(
    "--tls-allow-insecure", rich_help_panel=_P, show_default=False,
    help="Accept any server certificate.")]
TlsHostnameVerification = Annotated[bool | None, typer.Option(
    "--tls-enable-hostname-verification", rich_help_panel=_P, show_default=False,
    help="Check the server's host name against its certificate (off by default, as pulsar-admin).")]
RequestTimeout = Annotated[float | None, typer.Option(
    "--request-timeout", metavar="SECONDS", rich_help_panel=_P,
    help="Give up on a request after this many seconds (default 30).")]
ClientConf = Annotated[Path | None, typer.Option(
    "--client-conf", metavar="FILE", rich_help_panel=_P,
    help="A Pulsar client.conf (default: $PULSAR_CLIENT_CONF).")]
Debug = Annotated[bool, typer.Option(
    "--debug", rich_help_panel=_P, help="Trace every HTTP request on stderr (credentials redacted).")]

#: snapshots become optional for commands that can read the cluster live instead
OptionalSnapshots = Annotated[
    list[Path] | None,
    typer.Argument(help="Snapshot files (.json, .yaml, .jsonl, optionally .gz); several form a "
                   "sequence. Without any, the live cluster is read (--admin-url).",
                   show_default=False, metavar="[SNAPSHOT]..."),
]


def remember(ctx: typer.Context, **options: Any) -> None:
    """Store the global options on the root context (called by the root callback)."""
    ctx.obj = ConnectionOptions(**{k: (str(v) if isinstance(v, Path) else v)  # type: ignore[arg-type]  # the root callback's typed flags
                                   for k, v in options.items()})


def options_of(ctx: typer.Context | None) -> ConnectionOptions:
    """The global options stored on the root context (a subcommand's context walks up to it)."""
    node: Any = ctx  # parents are the CLI library's own Context class
    while node is not None:
        if isinstance(node.obj, ConnectionOptions):
            return node.obj
        node = node.parent
    return ConnectionOptions()


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def open_client(ctx: typer.Context | None) -> AdminClient:
    """An admin client for the resolved options (flags > client.conf > defaults)."""
    from lbctl.admin.client import client_from_config
    from lbctl.admin.clientconf import resolve_connection

    opts = options_of(ctx)
    cfg = resolve_connection(opts)
    def trace(line: str) -> None:
        sys.stderr.write(f"lbctl: debug: {line}\n")

    return client_from_config(cfg, trace=trace if cfg.debug else None)


def warn(message: str) -> None:
    sys.stderr.write(f"lbctl: warning: {message}\n")


def progress_bar(enabled: bool) -> Any:
    """A one-line progress display on stderr (only on a terminal)."""
    if not enabled:
        return None

    def show(step: str, done: int, total: int) -> None:
        width = 30
        filled = width if total == 0 else int(width * done / max(total, 1))
        sys.stderr.write(f"\r{step:<14} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}  ")
        if done >= total:
            sys.stderr.write("\r" + " " * (width + 40) + "\r")
        sys.stderr.flush()

    return show


def live_states(ctx: typer.Context | None, *, topics: bool = True) -> list[ClusterState]:
    """The live cluster as a one-element sequence, warning about brokers that could not be read."""
    from lbctl.sources.live import LiveSource

    with open_client(ctx) as client:
        read = LiveSource(client, topics=topics,
                          progress=progress_bar(is_terminal(sys.stderr))).read()
    for f in read.failures:
        warn(f"{f.broker}: {f.error}")
    for w in read.warnings:
        warn(w)
    return [read.state]
