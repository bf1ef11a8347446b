"""Named connection contexts (``lbctl context add|use|list|delete``), as pulsarctl keeps them.

pulsarctl (``pkg/ctl/context``: ``context set NAME`` stores the connection flags given with it
under NAME, merging over an existing entry, and makes it current; ``context use``, ``context get``
and ``context delete``) keeps one file of named contexts and a current one. lbctl does the same
with its own connection flags (pulsar-admin's names): a context is the flags given to
``context add``, kept in ``$XDG_CONFIG_HOME/lbctl/contexts.json`` (default
``~/.config/lbctl/contexts.json``; ``$LBCTL_CONTEXTS`` names another file), written atomically,
file 0600 in a 0700 directory, since it may hold a token or a keystore password.

Where a context sits (highest first)::

    command-line flags
    > the context: --context NAME, else $LBCTL_CONTEXT, else the current one
    > client.conf (--client-conf or the context's, $PULSAR_CLIENT_CONF, $PULSAR_HOME/conf/…)
    > defaults

Secrets are stored as given and never shown: :func:`describe` prints ``(set)`` for them.
"""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path
from typing import Any

import msgspec

from lbctl.admin.clientconf import ConnectionOptions
from lbctl.errors import ConfigError, UsageError
from lbctl.records import replace

ENV_FILE = "LBCTL_CONTEXTS"
ENV_NAME = "LBCTL_CONTEXT"
#: the options a context keeps (every connection flag but --debug)
KEPT = tuple(f.name for f in fields(ConnectionOptions) if f.name not in ("debug", "context_origin"))
#: never printed
SECRETS = frozenset(f.name for f in fields(ConnectionOptions) if not f.repr)


class Store(msgspec.Struct, kw_only=True):
    """The file: the current context's name and every context's options (flag names)."""

    current: str | None = None
    contexts: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)


def store_path(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    if env.get(ENV_FILE):
        return Path(env[ENV_FILE])
    base = env.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "lbctl" / "contexts.json"


def load(path: Path) -> Store:
    """The stored contexts; none when the file does not exist."""
    if not path.exists():
        return Store()
    from lbctl.safe.files import read_regular

    data = read_regular(str(path), what="lbctl's contexts (JSON)", error=ConfigError)
    try:
        return msgspec.json.decode(data, type=Store)
    except (msgspec.DecodeError, msgspec.ValidationError) as e:
        raise ConfigError(f"{path}: not lbctl's contexts file: {str(e).splitlines()[0]}") from None
    except RecursionError:  # an unknown key's value nested past the limit (msgspec recurses)
        raise ConfigError(f"{path}: not lbctl's contexts file: nested too deeply") from None


def save(path: Path, store: Store) -> None:
    from lbctl.safe.files import atomic_write, private_dir

    private_dir(str(path.parent))
    atomic_write(str(path), msgspec.json.format(msgspec.json.encode(store), indent=2) + b"\n",
                 error=ConfigError, mode=0o600)


def given(opts: ConnectionOptions) -> dict[str, Any]:
    """The connection flags actually given (what ``context add`` keeps)."""
    out = {k: getattr(opts, k) for k in KEPT if getattr(opts, k) is not None}
    if out.get("token") == "-":
        raise UsageError("a context cannot keep --token - (read from stdin once): give "
                         "--token-file FILE or --token env:VAR")
    if "client_conf" in out:
        out["client_conf"] = os.path.abspath(out["client_conf"])
    return out


def add(store: Store, name: str, options: dict[str, Any]) -> bool:
    """Merge ``options`` into context ``name`` (created when new) and make it current; whether it
    was created."""
    if not name or name != name.strip() or not name.isprintable():  # a control character
        raise UsageError(f"bad context name {name!r}")  # (an escape sequence) included
    if isinstance(options.get("admin_url"), str):  # refused now, not on every later use
        from lbctl.admin.clientconf import check_admin_url

        check_admin_url(options["admin_url"])
    created = name not in store.contexts
    store.contexts[name] = {**store.contexts.get(name, {}), **options}
    store.current = name
    return created


def use(store: Store, name: str) -> None:
    _known(store, name)
    store.current = name


def delete(store: Store, name: str) -> None:
    _known(store, name)
    del store.contexts[name]
    if store.current == name:
        store.current = None


def _known(store: Store, name: str) -> None:
    if name not in store.contexts:
        from lbctl.config import closest

        hint = closest(name, sorted(store.contexts))
        raise UsageError(f"no context named {name!r}" + (f" (did you mean {hint}?)" if hint else "")
                         + (f"; contexts: {', '.join(sorted(store.contexts))}"
                            if store.contexts else "; none yet: lbctl context add NAME --admin-url URL"))


def describe(options: dict[str, Any]) -> dict[str, Any]:
    """A context's options for printing: secrets as ``(set)``."""
    return {k: ("(set)" if k in SECRETS else v) for k, v in options.items()}


def with_context(opts: ConnectionOptions, name: str | None,
                 env: dict[str, str] | None = None) -> ConnectionOptions:
    """``opts`` with every flag not given taken from the context: ``name`` (``--context``), else
    ``$LBCTL_CONTEXT``, else the current one; unchanged without any."""
    env = dict(os.environ) if env is None else env
    path = store_path(env)
    wanted = name or env.get(ENV_NAME) or None
    if wanted is None and not path.exists():
        return opts
    store = load(path)
    wanted = wanted or store.current
    if wanted is None:
        return opts
    _known(store, wanted)
    stored = {k: v for k, v in store.contexts[wanted].items() if k in KEPT}
    fill = {k: v for k, v in stored.items() if getattr(opts, k) is None}
    if ("token" in fill or "token_file" in fill or "auth_params" in fill) and \
            any(getattr(opts, k) is not None for k in ("token", "token_file", "auth_params",
                                                       "auth_plugin")):
        for k in ("token", "token_file", "auth_params", "auth_plugin"):  # flags' auth wins whole
            fill.pop(k, None)
    if any(k in fill for k in AUTH_KEYS):
        fill["context_origin"] = origin(wanted, "flag" if name else
                                        "env" if env.get(ENV_NAME) else "current")
    return replace(opts, **fill)


#: the options that make a context's credential (an auth error names the context that gave them)
AUTH_KEYS = ("token", "token_file", "auth_params", "auth_plugin", "tls_cert_file", "tls_key_file")


def origin(name: str, how: str) -> str:
    """Where a credential came from and how to leave it, for the end of an auth error: a context
    made current by ``context use`` a week ago is otherwise invisible, and the error named only a
    token file the operator never typed (walk21). ``how``: ``flag``, ``env`` or ``current``."""
    other = "--token-file/--auth-params FILE"
    if how == "flag":
        return f"from --context {name}; to leave it, drop --context or give {other}"
    if how == "env":
        return f"from context {name} named by ${ENV_NAME}; to leave it, unset {ENV_NAME} or give {other}"
    return (f"from context {name}, made current by lbctl context add/use; to leave it, lbctl "
            f"context use OTHER, lbctl context delete {name} or give {other}")
