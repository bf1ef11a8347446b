"""Global connection options (pulsar-admin's names) and the helpers live commands share.

The root command takes them, before the subcommand as with pulsar-admin — or after it, as
pulsar-admin users often type them (:class:`lbctl.cli.root.RootGroup` moves them in front)::

    lbctl --admin-url https://pulsar:8443 --auth-plugin AuthenticationToken \\
          --auth-params file:///etc/pulsar/admin.jwt monitor-brokers --once
    lbctl monitor-brokers --once --admin-url https://pulsar:8443 --token-file /etc/pulsar/admin.jwt

They are only stored here; a client.conf is read and httpx imported when a command actually talks
to a cluster, so ``lbctl --help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lbctl.safe.text import one_line

if TYPE_CHECKING:
    from lbctl.admin.client import AdminClient
    from lbctl.admin.clientconf import ConnectionOptions
    from lbctl.sources.cluster import LiveCluster

_P = "Connection (pulsar-admin options)"

#: :data:`lbctl.admin.auth.PLUGIN_NAMES`, spelled out so that declaring the root's flags (every
#: command, a file-reading one too) does not import the admin client's modules; a test keeps the
#: two equal (tests/cli/test_connection.py)
PLUGIN_NAMES = "AuthenticationToken, AuthenticationTls, AuthenticationOAuth2, AuthenticationBasic"

AdminUrl = Annotated[str | None, typer.Option(
    "--admin-url", metavar="URL", rich_help_panel=_P,
    help="Admin service URL (client.conf webServiceUrl; default http://localhost:8080).")]
AuthPlugin = Annotated[str | None, typer.Option(
    "--auth-plugin", metavar="CLASS", rich_help_panel=_P,
    help=f"{PLUGIN_NAMES} (short or fully qualified).")]
AuthParams = Annotated[str | None, typer.Option(
    "--auth-params", metavar="PARAMS", rich_help_panel=_P, show_default=False,
    help="Plugin parameters (never printed). For a token prefer file:///path, env:VAR or token:- "
         "(read from stdin) to token:…, which any local user can read in the process list.")]
Token = Annotated[str | None, typer.Option(
    "--token", metavar="TOKEN", rich_help_panel=_P, show_default=False,
    help="AuthenticationToken with this token; - reads it from stdin, env:VAR from a variable.")]
TokenFile = Annotated[str | None, typer.Option(
    "--token-file", metavar="FILE", rich_help_panel=_P,
    help="AuthenticationToken with the token in FILE (read again on every request).")]
TlsTrustCertPath = Annotated[str | None, typer.Option(
    "--tls-trust-cert-path", metavar="FILE", rich_help_panel=_P, help="CA certificates (PEM).")]
TlsCertFile = Annotated[str | None, typer.Option(
    "--tls-cert-file", metavar="FILE", rich_help_panel=_P,
    help="Client certificate (PEM), as client.conf tlsCertificateFilePath.")]
TlsKeyFile = Annotated[str | None, typer.Option(
    "--tls-key-file", metavar="FILE", rich_help_panel=_P,
    help="Client private key (PEM), as client.conf tlsKeyFilePath.")]
TlsAllowInsecure = Annotated[bool | None, typer.Option(
    "--tls-allow-insecure", rich_help_panel=_P, show_default=False,
    help="Accept any server certificate (warns when a credential is sent).")]
TlsHostnameVerification = Annotated[bool | None, typer.Option(
    "--tls-enable-hostname-verification/--no-tls-enable-hostname-verification",
    rich_help_panel=_P, show_default=False,
    help="Check the server's host name against its certificate. Default: on whenever a credential "
         "is sent, else off (as pulsar-admin).")]
BrokerHostAllow = Annotated[list[str] | None, typer.Option(
    "--broker-host-allow", metavar="PATTERN", rich_help_panel=_P,
    help="Only brokers whose host (or host:port) matches a pattern (*, ?) are contacted and get "
         "credentials; repeatable (client.conf brokerHostAllow, comma-separated).")]
RequestTimeout = Annotated[float | None, typer.Option(
    "--request-timeout", metavar="SECONDS", rich_help_panel=_P,
    help="Give up on a request after this many seconds (default 30, at most 86400).")]
MaxInputSize = Annotated[str | None, typer.Option(
    "--max-input-size", metavar="SIZE", rich_help_panel="Limits",
    help="Largest input file, after decompression (default 1G).")]
MaxResponseSize = Annotated[str | None, typer.Option(
    "--max-response-size", metavar="SIZE", rich_help_panel="Limits",
    help="Largest HTTP response body (default 256M).")]
ClientConf = Annotated[Path | None, typer.Option(
    "--client-conf", metavar="FILE", rich_help_panel=_P,
    help="A Pulsar client.conf (default: $PULSAR_CLIENT_CONF, else "
         "$PULSAR_HOME/conf/client.conf if it exists, as pulsar-admin).")]
ContextName = Annotated[str | None, typer.Option(
    "--context", metavar="NAME", rich_help_panel=_P,
    help="Connect as the named context says (lbctl context list; default: $LBCTL_CONTEXT, else "
         "the current one); flags given win over it.")]
Debug = Annotated[bool, typer.Option(
    "--debug", rich_help_panel=_P, help="Trace every HTTP request on stderr (credentials redacted).")]

#: snapshots become optional for commands that can read the cluster live instead
OptionalSnapshots = Annotated[
    list[Path] | None,
    typer.Argument(help="Snapshot files (.json, .yaml, .jsonl, optionally .gz); several form a "
                   "sequence. Without any, the live cluster is read (--admin-url).",
                   show_default=False, metavar="[SNAPSHOT]..."),
]


#: where the root stores the connection flags given (:func:`given_options` reads them)
GIVEN_KEY = "lbctl.connection"


def remember(ctx: typer.Context, **options: Any) -> None:
    """Store the global options on the root context (called by the root callback), as they
    were given: :func:`given_options` makes the :class:`~lbctl.admin.clientconf.ConnectionOptions`
    of them when a command asks, so a command that reads files imports nothing of the admin
    client."""
    hosts = options.pop("broker_host_allow", None)
    if hosts:
        options["broker_host_allow"] = ",".join(hosts)
    ctx.meta[GIVEN_KEY] = {k: (str(v) if isinstance(v, Path) else v) for k, v in options.items()}


def set_limits(max_input_size: str | None, max_response_size: str | None) -> None:
    """``--max-input-size`` / ``--max-response-size`` into :data:`lbctl.safe.files.LIMITS`."""
    from lbctl.safe.files import LIMITS, Limits, parse_size

    defaults = Limits()
    LIMITS.max_input_bytes = (parse_size(max_input_size, "--max-input-size") if max_input_size
                              else defaults.max_input_bytes)
    LIMITS.max_response_bytes = (parse_size(max_response_size, "--max-response-size")
                                 if max_response_size else defaults.max_response_bytes)


#: the root's options, by flag: whether each takes a value (read by :class:`lbctl.cli.root.RootGroup`)
GLOBAL_FLAGS: dict[str, bool] = {}


def hoist_global_options(args: list[str], flags: dict[str, bool]) -> list[str]:
    """``args`` with every global flag found after the first positional argument (the
    subcommand) moved, with its value, in front of it."""
    i = 0
    while i < len(args):  # past the global options given before the subcommand
        a = args[i]
        if a == "--":
            return args
        if not a.startswith("-") or a == "-":
            break
        i += 2 if flags.get(a.split("=", 1)[0]) and "=" not in a else 1
    else:
        return args
    front, moved, rest = args[:i], [], []
    while i < len(args):
        a = args[i]
        if a == "--":
            rest += args[i:]
            break
        name = a.split("=", 1)[0]
        if name in flags:
            n = 2 if flags[name] and "=" not in a else 1
            moved += args[i:i + n]
            i += n
            continue
        rest.append(a)
        i += 1
    return front + moved + rest


#: the subcommands' own output flag, also accepted before the subcommand (``lbctl -o json …``)
OUTPUT_FLAGS = ("-o", "--output")


def sink_output_option(args: list[str], flags: dict[str, bool]) -> list[str]:
    """``args`` with an ``-o FORMAT`` / ``--output FORMAT`` (or ``-oFORMAT``, ``--output=FORMAT``)
    given before the subcommand moved to the end (before a ``--``), where the subcommand that
    owns it reads it: ``lbctl -o json recommend s.json`` is ``lbctl recommend s.json -o json``,
    as the connection flags may stand on either side."""
    i = 0
    moved: list[str] = []
    front: list[str] = []
    while i < len(args):
        a = args[i]
        if a == "--" or not a.startswith("-") or a == "-":
            break
        name = a.split("=", 1)[0]
        if a in OUTPUT_FLAGS and i + 1 < len(args):
            moved += [a, args[i + 1]]
            i += 2
            continue
        if name == "--output" or (a.startswith("-o") and not a.startswith("--") and len(a) > 2):
            moved.append(a)
            i += 1
            continue
        n = 2 if flags.get(name) and "=" not in a else 1
        front += args[i:i + n]
        i += n
    if not moved:
        return args
    rest = args[i:]
    cut = rest.index("--") if "--" in rest else len(rest)
    return front + rest[:cut] + moved + rest[cut:]


def given_options(ctx: typer.Context | None) -> ConnectionOptions:
    """The global options given on the line, stored by the root callback (a context's ``meta``
    is shared by the whole chain: a subcommand's context sees the root's)."""
    from lbctl.admin.clientconf import ConnectionOptions

    given = ctx.meta.get(GIVEN_KEY) if ctx is not None else None
    return ConnectionOptions(**given) if given else ConnectionOptions()


#: where the root stores ``--context NAME`` (:func:`options_of` reads it)
CONTEXT_KEY = "lbctl.context"


def options_of(ctx: typer.Context | None) -> ConnectionOptions:
    """The options a command connects with: those given, then the named context's
    (``--context``, ``$LBCTL_CONTEXT`` or the current one: :mod:`lbctl.admin.contexts`)."""
    from lbctl.admin.contexts import with_context

    name = ctx.find_root().meta.get(CONTEXT_KEY) if ctx is not None else None
    return with_context(given_options(ctx), name)


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
        sys.stderr.write(f"lbctl: debug: {one_line(line)}\n")

    return client_from_config(cfg, trace=trace if cfg.debug else None, warn=_warn_once)


def live_cluster(ctx: typer.Context | None, *, topics: bool = True,
                 namespaces: bool = True) -> LiveCluster:
    """The cluster the connection flags name (its client opened when it is read). The flags and
    client.conf are checked here, at once: a bad ``--admin-url`` is a usage error before the
    command binds a port, starts a thread or writes a file (``lbctl watch``), not a failed read
    later."""
    from lbctl.admin.clientconf import resolve_connection
    from lbctl.sources.cluster import LiveCluster

    resolve_connection(options_of(ctx))
    return LiveCluster(lambda: open_client(ctx), topics, namespaces)


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        warn(message)


def warn(message: str) -> None:
    sys.stderr.write(f"lbctl: warning: {one_line(message)}\n")


def warn_fitted(message: str) -> None:
    """:func:`warn` fitted to the terminal as apply's own lines are
    (:func:`lbctl.apply.runner.fit_line`: ``$COLUMNS``, else 80 when piped; broken at blanks
    only, so the journal's path or a bundle stays whole; continued 4 columns in). For the
    warnings of a run an operator watches (``apply``, ``drain``: "THE BALANCER IS STILL PAUSED
    …" ran to 250 columns, walk21); a log that wants one record a line uses :func:`warn`."""
    from lbctl.apply.runner import fit_line

    for part in fit_line(f"lbctl: warning: {one_line(message)}", -1):
        sys.stderr.write(part + "\n")


def inform(message: str) -> None:
    """A line of information on stderr, ``lbctl: …``: what a long-running command did that
    needs no one's attention now (a plan queued for review), so not ``lbctl: warning:``, which
    an SRE greps the service's log for (walk18)."""
    sys.stderr.write(f"lbctl: {one_line(message)}\n")
