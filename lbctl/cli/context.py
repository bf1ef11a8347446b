"""`lbctl context add|use|list|delete`: named connections, as pulsarctl's contexts
(:mod:`lbctl.admin.contexts`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import typer

from lbctl.cli.common import Shown
from lbctl.cli.groups import Fields, grouped
from lbctl.render.schema import Schema, col

app = typer.Typer(
    help="Named connections (admin URL, credentials, TLS), as pulsarctl's contexts: add one with "
         "the connection flags, use it, list them, delete one.",
    no_args_is_help=True, rich_markup_mode=None)

Name = Annotated[str, typer.Argument(metavar="NAME", show_default=False, help="The context.")]

CONTEXTS_SCHEMA = Schema("context list", "context", (
    col("current", "boolean", "whether commands use it when no --context is given"),
    col("name", "string", "its name"),
    col("admin_url", "string", "--admin-url"),
    col("auth", "string", "the authentication it sends (secrets never shown)"),
    col("client_conf", "string", "--client-conf"),
))


@dataclass(frozen=True)
class ContextsView:
    path: str
    current: str | None
    contexts: dict[str, dict[str, Any]]
    schema: ClassVar[Schema] = CONTEXTS_SCHEMA

    def to_data(self) -> Any:
        from lbctl.admin.contexts import describe

        return {"file": self.path, "current": self.current,
                "contexts": {n: describe(o) for n, o in sorted(self.contexts.items())}}

    def to_rows(self) -> list[dict[str, Any]]:
        return [{"current": n == self.current, "name": n, "admin_url": o.get("admin_url"),
                 "auth": _auth(o), "client_conf": o.get("client_conf")}
                for n, o in sorted(self.contexts.items())]

    def to_text(self) -> str:
        from lbctl.render import table

        if not self.contexts:
            return (f"{self.path}: no context yet (lbctl context add NAME --admin-url URL "
                    "[--token-file FILE …])")
        rows = [{"": "*" if r["current"] else "", "name": r["name"],
                 "admin URL": r["admin_url"] or "", "auth": r["auth"] or "",
                 "client.conf": r["client_conf"] or ""} for r in self.to_rows()]
        return f"{self.path}:\n" + table(rows)


def _auth(options: dict[str, Any]) -> str:
    """What authentication a context sends, without its secret."""
    if options.get("token_file"):
        return f"token file {options['token_file']}"
    if options.get("token"):
        return "token (set)"
    if options.get("auth_plugin"):
        return str(options["auth_plugin"]).rsplit(".", 1)[-1] + (
            " (params set)" if options.get("auth_params") else "")
    if options.get("tls_cert_file") or options.get("tls_key_store_path"):
        return "TLS client certificate"
    return ""


def _store() -> tuple[Any, Any]:
    from lbctl.admin.contexts import load, store_path

    path = store_path()
    return path, load(path)


@grouped
def add(ctx: typer.Context, *, name: Name) -> None:
    """Keep the connection flags given with it as context NAME, and use it from now on.

    An existing NAME is updated: the flags given replace its values, the others stay (as pulsarctl
    context set). Kept in $XDG_CONFIG_HOME/lbctl/contexts.json, file 0600; credentials are stored
    there and never printed.

    \b
    Examples:
      lbctl context add prod --admin-url https://pulsar.prod:8443 \\
          --token-file /etc/pulsar/admin.jwt \\
          --tls-trust-cert-path /etc/pulsar/ca.pem
      lbctl context add local --admin-url http://localhost:8080
    """
    from lbctl.admin.contexts import add as add_context
    from lbctl.admin.contexts import given, save
    from lbctl.cli.connection import given_options
    from lbctl.errors import UsageError

    options = given(given_options(ctx))
    if not options:
        raise UsageError("give the connection flags to keep, e.g. lbctl context add "
                         f"{name} --admin-url URL [--token-file FILE]")
    path, store = _store()
    created = add_context(store, name, options)
    save(path, store)
    typer.echo(f"context {name!r} {'created' if created else 'modified'} in {path}; "
               "now the current one")


def use(name: Name) -> None:
    """Make NAME the context commands use when no --context is given."""
    from lbctl.admin.contexts import save
    from lbctl.admin.contexts import use as use_context

    path, store = _store()
    use_context(store, name)
    save(path, store)
    typer.echo(f"using context {name!r}")


@grouped
def list_(*, shown: Annotated[Shown, Fields("output")]) -> None:
    """List the contexts (* the current one); credentials are never shown."""
    path, store = _store()
    shown.emit(ContextsView(str(path), store.current, store.contexts))


def delete(name: Name) -> None:
    """Forget context NAME (when it was the current one, none is current afterwards)."""
    from lbctl.admin.contexts import delete as delete_context
    from lbctl.admin.contexts import save

    path, store = _store()
    delete_context(store, name)
    save(path, store)
    typer.echo(f"context {name!r} deleted")


app.command("add")(add)
app.command("use")(use)
app.command("list")(list_)
app.command("delete")(delete)
