"""The root `lbctl` command: global options and one line per subcommand."""

from __future__ import annotations

from typing import Annotated

import typer

from lbctl import __version__
from lbctl.cli import apply as apply_cmd
from lbctl.cli import assign_preview as assign_preview_cmd
from lbctl.cli import brokers as brokers_cmd
from lbctl.cli import compare as compare_cmd
from lbctl.cli import connection, explain, export, monitor_brokers, recommend, snapshot, unload
from lbctl.cli import context as context_cmd
from lbctl.cli import doctor as doctor_cmd
from lbctl.cli import drain as drain_cmd
from lbctl.cli import examples as examples_cmd
from lbctl.cli import fleet as fleet_cmd
from lbctl.cli import journal as journal_cmd
from lbctl.cli import plans as plans_cmd
from lbctl.cli import prometheus as prometheus_cmd
from lbctl.cli import propose as propose_cmd
from lbctl.cli import sandbox as sandbox_cmd
from lbctl.cli import simulate as simulate_cmd
from lbctl.cli import split_bundle as split_bundle_cmd
from lbctl.cli import watcher as watcher_cmd
from lbctl.cli.root import RootGroup


def _exit_codes() -> str:
    """The epilog of ``lbctl --help``: the exit codes, from :class:`~lbctl.errors.ExitStatus`
    (``\b`` keeps Click from re-flowing the lines)."""
    from lbctl.errors import ExitStatus

    return "\b\nExit codes:\n" + "\n".join(f"  {int(s):>3}  {s.description}" for s in ExitStatus)


app = typer.Typer(
    name="lbctl",
    help="Understand and steer Apache Pulsar broker load balancing.",
    epilog=_exit_codes(),
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    cls=RootGroup,  # one failure handler; connection flags also after the subcommand
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


app.command("recommend")(recommend.recommend)
app.command("explain")(explain.explain)
app.add_typer(snapshot.app, name="snapshot")
app.command("split-bundle")(split_bundle_cmd.split_bundle)
app.command("assign-preview")(assign_preview_cmd.assign_preview)
app.command("monitor-brokers")(monitor_brokers.monitor_brokers)
app.command("unload")(unload.unload)
snapshot.app.command("export")(export.export)
snapshot.app.command("from-prometheus")(prometheus_cmd.from_prometheus)
app.add_typer(fleet_cmd.app, name="fleet")
app.command("simulate")(simulate_cmd.simulate)
app.command("compare")(compare_cmd.compare)
app.command("brokers")(brokers_cmd.brokers)
app.command("journal")(journal_cmd.journal)
app.command("sandbox")(sandbox_cmd.sandbox)
app.command("examples")(examples_cmd.examples)
app.command("propose")(propose_cmd.propose)
app.command("apply")(apply_cmd.apply)
app.command("drain")(drain_cmd.drain)
app.command("rebalance-after")(drain_cmd.rebalance_after)
app.command("doctor")(doctor_cmd.doctor)
app.add_typer(context_cmd.app, name="context")
app.command("watch")(watcher_cmd.watch)
app.add_typer(plans_cmd.app, name="plans")


def main() -> None:
    app(prog_name="lbctl")
