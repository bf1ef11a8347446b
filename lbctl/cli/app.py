"""The root `lbctl` command: global options and one line per subcommand (:data:`LAZY`: where each
subcommand is declared, imported only when that subcommand is asked for — a one-shot `lbctl
recommend` declares `recommend` alone; see :mod:`lbctl.cli.root`)."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from importlib import import_module
from typing import Annotated, Any

import typer
import typer.main

from lbctl import __version__
from lbctl.cli import connection
from lbctl.cli.helptext import HelpContext, whole_words
from lbctl.cli.root import RootGroup

#: the root's settings that shape how Typer builds each subcommand (see _built)
_SETTINGS: dict[str, Any] = {"rich_markup_mode": None, "pretty_exceptions_enable": False}


def _built(name: str, register: Callable[[typer.Typer], None]) -> Any:
    """The subcommand ``name`` as Typer builds it for the root: registered on a group with the
    root's settings, then taken from the group Typer makes of it."""
    holder = typer.Typer(add_completion=False, **_SETTINGS)
    holder.callback()(_nothing)  # a group: its commands are built as the root's are
    register(holder)
    command = typer.main.get_command(holder).commands[name]  # type: ignore[attr-defined]
    _finite_floats(command)
    whole_words(command)  # --help never cuts a flag at its hyphen
    return command


def _finite_floats(command: Any) -> None:
    """Every number option of ``command`` (and of its subcommands) refuses ``nan`` and ``inf``.

    Python's ``float()`` takes them and the CLI library's ranges let ``nan`` through (no
    comparison with it is true): ``--interval nan`` reached ``time.sleep`` between an apply's
    batches, ``--max-age nan`` made every plan fresh. Each option gets its own copy of its type
    (a shared one, the library's ``FLOAT``, is left alone)."""
    for sub in getattr(command, "commands", {}).values():
        _finite_floats(sub)
    for param in command.params:
        kind = param.type
        if getattr(kind, "name", None) not in ("float", "float range"):
            continue
        checked = copy.copy(kind)

        def convert(value: Any, p: Any, ctx: Any, _orig: Any = kind.convert,
                    _kind: Any = checked) -> Any:
            number = _orig(value, p, ctx)
            if isinstance(number, float) and not math.isfinite(number):
                _kind.fail(f"{value!r} is not a finite number.", p, ctx)
            return number

        checked.convert = convert
        param.type = checked


def _nothing() -> None:
    """The callback of :func:`_built`'s holder group (never run)."""


def _command(name: str, module: str, function: str) -> Callable[[], Any]:
    def load() -> Any:
        func = getattr(import_module(f"lbctl.cli.{module}"), function)
        return _built(name, lambda h: h.command(name)(func))
    return load


def _group(name: str, module: str, extra: Callable[[typer.Typer], None] | None = None
           ) -> Callable[[], Any]:
    def load() -> Any:
        sub: typer.Typer = import_module(f"lbctl.cli.{module}").app
        if extra is not None:
            extra(sub)
        return _built(name, lambda h: h.add_typer(sub, name=name))
    return load


def _snapshot_commands(sub: typer.Typer) -> None:
    """``snapshot export`` and ``snapshot from-prometheus`` live in their own modules."""
    if any(c.name == "export" for c in sub.registered_commands):
        return  # a second root built in the same process (the tests build several)
    from lbctl.cli import export, prometheus

    sub.command("export")(export.export)
    sub.command("from-prometheus")(prometheus.from_prometheus)


# in the order Typer lists them: the commands as registered, then the groups
LAZY: dict[str, Callable[[], Any]] = {
    "recommend": _command("recommend", "recommend", "recommend"),
    "explain": _command("explain", "explain", "explain"),
    "split-bundle": _command("split-bundle", "split_bundle", "split_bundle"),
    "assign-preview": _command("assign-preview", "assign_preview", "assign_preview"),
    "monitor-brokers": _command("monitor-brokers", "monitor_brokers", "monitor_brokers"),
    "unload": _command("unload", "unload", "unload"),
    "simulate": _command("simulate", "simulate", "simulate"),
    "compare": _command("compare", "compare", "compare"),
    "brokers": _command("brokers", "brokers", "brokers"),
    "journal": _command("journal", "journal", "journal"),
    "sandbox": _command("sandbox", "sandbox", "sandbox"),
    "examples": _command("examples", "examples", "examples"),
    "propose": _command("propose", "propose", "propose"),
    "apply": _command("apply", "apply", "apply"),
    "drain": _command("drain", "drain", "drain"),
    "rebalance-after": _command("rebalance-after", "drain", "rebalance_after"),
    "doctor": _command("doctor", "doctor", "doctor"),
    "watch": _command("watch", "watcher", "watch"),
    "snapshot": _group("snapshot", "snapshot", _snapshot_commands),
    "fleet": _group("fleet", "fleet"),
    "context": _group("context", "context"),
    "plans": _group("plans", "plans"),
}


class _Root(RootGroup):
    lazy = LAZY
    context_class = HelpContext


def _exit_codes() -> str:
    """The epilog of ``lbctl --help``: the exit codes, from :class:`~lbctl.errors.ExitStatus`
    (``\b`` keeps Click from re-flowing the lines), and where the ``docs/*.md`` pages that help
    texts and messages name are for an installed lbctl: the wheel has no docs/, the sdist has
    them (MANIFEST.in), and no documentation site exists to name instead."""
    from lbctl.errors import ExitStatus

    return ("\b\nExit codes:\n" + "\n".join(f"  {int(s):>3}  {s.description}" for s in ExitStatus)
            + f"\n\n\b\n{DOCS_WHERE}")


#: the one line saying where the docs/*.md pages are (``lbctl --help``'s last line)
DOCS_WHERE = "docs/*.md: in the sdist (pip download --no-deps --no-binary :all: lbctl)"


app = typer.Typer(
    name="lbctl",
    help="Understand and steer Apache Pulsar broker load balancing.",
    epilog=_exit_codes(),
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    # one failure handler; connection flags also after the subcommand; subcommands built lazily
    cls=_Root,
    **_SETTINGS,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"lbctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option("--version", "-V", "-v", callback=_version, is_eager=True,
                     help="Print the version."),
    ] = False,
    admin_url: connection.AdminUrl = None,
    auth_plugin: connection.AuthPlugin = None,
    auth_params: connection.AuthParams = None,
    token: connection.Token = None,
    token_file: connection.TokenFile = None,
    tls_trust_cert_path: connection.TlsTrustCertPath = None,
    tls_cert_file: connection.TlsCertFile = None,
    tls_key_file: connection.TlsKeyFile = None,
    tls_allow_insecure: connection.TlsAllowInsecure = None,
    tls_enable_hostname_verification: connection.TlsHostnameVerification = None,
    broker_host_allow: connection.BrokerHostAllow = None,
    request_timeout: connection.RequestTimeout = None,
    client_conf: connection.ClientConf = None,
    context: connection.ContextName = None,
    debug: connection.Debug = False,
    max_input_size: connection.MaxInputSize = None,
    max_response_size: connection.MaxResponseSize = None,
) -> None:
    """Understand and steer Apache Pulsar broker load balancing."""
    connection.set_limits(max_input_size, max_response_size)
    ctx.meta[connection.CONTEXT_KEY] = context
    connection.remember(
        ctx, admin_url=admin_url, auth_plugin=auth_plugin, auth_params=auth_params, token=token,
        token_file=token_file, tls_trust_cert_path=tls_trust_cert_path, tls_cert_file=tls_cert_file,
        tls_key_file=tls_key_file, tls_allow_insecure=tls_allow_insecure,
        tls_enable_hostname_verification=tls_enable_hostname_verification,
        broker_host_allow=broker_host_allow, request_timeout=request_timeout,
        client_conf=client_conf, debug=debug)


def main() -> None:
    import warnings

    from lbctl.cli.exiting import arm, exit_without_freeing

    # figures near the double range (a rate of 1.7e308 is a valid Java double) overflow to inf
    # in numpy sums as they do in Java, silently: not a warning with a source line on stderr
    for what in ("overflow encountered", "invalid value encountered"):  # inf, and inf * 0
        warnings.filterwarnings("ignore", message=what, category=RuntimeWarning)
    arm()
    try:
        app(prog_name="lbctl")
    except SystemExit as e:
        exit_without_freeing(e.code)  # returns unless a large result was kept
        raise
    exit_without_freeing(0)
