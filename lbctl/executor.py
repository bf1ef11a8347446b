"""The only code that changes a cluster: it sends prepared mutations, carefully.

Rules, in the order they apply:

1. **Show first.** Every request is printed exactly as it will be sent (method, URL with query,
   JSON body) before anything happens.
2. **Dry run sends nothing.** ``--dry-run`` stops after showing; the whole pipeline before it —
   reading the cluster, validating the bundle and the destination — has run.
3. **Confirm.** On a terminal lbctl asks; ``--yes`` skips the question; without a terminal and
   without ``--yes`` it refuses (:class:`~lbctl.admin.errors.MutationRefused`, exit 12).
4. **Journal.** Before each request a ``sending`` line, after it a ``done``/``failed`` line, are
   appended to a JSON-lines journal (``--journal FILE``, else ``$LBCTL_JOURNAL``, else
   ``$XDG_STATE_HOME/lbctl/journal.jsonl``): one JSON object per line, ``time`` in RFC 3339 UTC
   with milliseconds (``lbctl journal`` prints it). The journal holds method, URL and body — never
   a header, so never a credential. If it cannot be written, nothing is sent.
5. **No blind retry.** Each mutation is sent once (the client never retries a mutation); the first
   failure stops the run and is reported with its exit code, saying which requests had been sent.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lbctl.admin.client import AdminClient, Call
from lbctl.admin.errors import AdminError
from lbctl.errors import ConfigError, MutationRefused


@dataclass(frozen=True)
class Mutation:
    """One change: the request and a sentence saying what it does."""

    call: Call
    summary: str


@dataclass(frozen=True)
class Outcome:
    mutation: Mutation
    request: str  # Call.describe(): what was (or would have been) sent
    state: str  # "dry-run" | "done" | "failed" | "not sent"
    status: int | None = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.mutation.summary, "request": self.request, "state": self.state,
                "status": self.status, "error": self.error}


def journal_time(epoch_seconds: float) -> str:
    """A journal line's ``time``: RFC 3339 in UTC with milliseconds (``2026-03-12T14:05:00.123Z``)."""
    from datetime import UTC, datetime

    t = datetime.fromtimestamp(epoch_seconds, UTC)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def default_journal() -> Path:
    env = os.environ.get("LBCTL_JOURNAL")
    if env:
        return Path(env).expanduser()
    state = os.environ.get("XDG_STATE_HOME") or os.path.join("~", ".local", "state")
    return Path(state).expanduser() / "lbctl" / "journal.jsonl"


class Executor:
    """Sends :class:`Mutation` s through an :class:`AdminClient`, following the module's rules."""

    def __init__(
        self,
        client: AdminClient,
        *,
        dry_run: bool = False,
        yes: bool = False,
        interactive: bool = False,
        confirm: Callable[[str], bool] | None = None,
        show: Callable[[str], None] = print,
        journal: Path | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.client = client
        self.dry_run = dry_run
        self.yes = yes
        self.interactive = interactive
        self.confirm = confirm
        self.show = show
        self.journal = journal or default_journal()
        self.clock = clock
        self.run_id = uuid.uuid4().hex[:12]

    def run(self, mutations: Sequence[Mutation]) -> list[Outcome]:
        requests = [m.call.describe(self.client.admin_url) for m in mutations]
        verb = "would send" if self.dry_run else "will send"
        self.show(f"lbctl {verb} {len(mutations)} request(s):")
        for m, r in zip(mutations, requests, strict=True):
            self.show(f"  {r}    # {m.summary}")
        if self.dry_run:
            self.show("dry run: nothing was sent")
            return [Outcome(m, r, "dry-run") for m, r in zip(mutations, requests, strict=True)]
        self._confirm(len(mutations))
        self._check_journal()
        outcomes: list[Outcome] = []
        for i, (m, r) in enumerate(zip(mutations, requests, strict=True)):
            self._journal(m, "sending")
            try:
                resp = self.client.request(m.call)
            except AdminError as e:
                self._journal(m, "failed", status=e.status, error=str(e))
                done = f"; {i} earlier request(s) were applied" if i else ""
                raise type(e)(f"{e}{done}", status=e.status, sent=e.sent) from None
            self._journal(m, "done", status=resp.status)
            outcomes.append(Outcome(m, r, "done", resp.status))
        return outcomes

    def _confirm(self, n: int) -> None:
        if self.yes:
            return
        if not self.interactive or self.confirm is None:
            raise MutationRefused(
                "refusing to change the cluster without confirmation: not a terminal; "
                "pass --yes to send, or --dry-run to only show the requests")
        if not self.confirm(f"Send {n} request(s) to {self.client.redact(self.client.admin_url)}?"):
            raise MutationRefused("aborted: nothing was sent")

    def _check_journal(self) -> None:
        try:
            self.journal.parent.mkdir(parents=True, exist_ok=True)
            with open(self.journal, "a", encoding="utf-8"):
                pass
        except OSError as e:
            raise ConfigError(f"cannot write the journal {self.journal} ({e.strerror}); nothing "
                              "was sent (set --journal or $LBCTL_JOURNAL)") from None

    def _journal(self, m: Mutation, state: str, *, status: int | None = None,
                 error: str | None = None) -> None:
        import orjson

        entry = {
            "time": journal_time(self.clock()),
            "run": self.run_id,
            "state": state,
            "action": m.summary,
            "method": m.call.method,
            "url": self.client.redact(m.call.url(self.client.admin_url)),
            "body": m.call.body,
            "status": status,
            "error": error,
        }
        with open(self.journal, "ab") as f:
            f.write(orjson.dumps(entry, option=orjson.OPT_APPEND_NEWLINE))


# --------------------------------------------------------------------------------------------
# mutations lbctl knows, and the checks made before any of them is sent
# --------------------------------------------------------------------------------------------
BUNDLE_KEYWORDS = ("LARGEST", "HOT")  # resolved by the broker (NamespacesBase.getBundleRange)


def parse_range(namespace: str, bundle: str) -> str:
    """``0xLLLLLLLL_0xUUUUUUUU`` (or ``tenant/ns/0x…_0x…`` of ``namespace``, or LARGEST/HOT)."""
    from lbctl.errors import UsageError
    from lbctl.model.bundle import BundleName, BundleNameError

    if bundle.upper() in BUNDLE_KEYWORDS:
        return bundle.upper()
    full = bundle if "/" in bundle else f"{namespace}/{bundle}"
    try:
        name = BundleName.parse(full)
    except BundleNameError as e:
        raise UsageError(f"bad bundle {bundle!r}: {e}") from None
    if name.namespace != namespace:
        raise UsageError(f"bundle {bundle} is not of namespace {namespace}")
    return full.rsplit("/", 1)[1]


def check_bundle(client: AdminClient, namespace: str, rng: str) -> None:
    """The bundle must be one of the namespace's current bundles (``GET …/bundles``)."""
    from lbctl.config import closest
    from lbctl.errors import UsageError

    if rng in BUNDLE_KEYWORDS:
        return
    data = client.bundles(namespace)
    bounds = data.get("boundaries") if isinstance(data, dict) else None
    if not isinstance(bounds, list):
        from lbctl.admin.errors import HttpError

        raise HttpError(f"GET bundles of {namespace}: expected {{\"boundaries\": [...]}}")
    ranges = [f"{a}_{b}" for a, b in zip(bounds, bounds[1:], strict=False)]
    if rng not in ranges:
        hint = closest(rng, ranges)
        raise UsageError(f"{namespace} has no bundle {rng}"
                         + (f" (did you mean {hint}?)" if hint else "")
                         + f"; it has {len(ranges)} bundle(s)")


def check_destination(client: AdminClient, broker: str) -> str:
    """The destination must be an active broker id; an ``http(s)://`` prefix is dropped (as the
    broker does in ``NamespacesBase``)."""
    from lbctl.config import closest
    from lbctl.errors import UsageError
    from lbctl.sources.live import LiveSource

    bid = broker.removeprefix("http://").removeprefix("https://").rstrip("/")
    d = LiveSource(client, topics=False, namespaces=False).discover()
    if bid not in d.brokers:
        hint = closest(bid, d.brokers)
        raise UsageError(f"destination broker {bid} is not an active broker of {d.cluster}"
                         + (f" (did you mean {hint}?)" if hint else ""))
    return bid


def unload_mutation(namespace: str, rng: str | None = None, destination: str | None = None) -> Mutation:
    from lbctl.admin.client import unload_call

    what = f"unload {namespace}/{rng}" if rng else f"unload every bundle of {namespace}"
    if destination:
        what += f" to {destination}"
    return Mutation(unload_call(namespace, rng, destination), what)


def split_mutation(namespace: str, rng: str, *, unload: bool = False, algorithm: str | None = None,
                   boundaries: Sequence[int] | None = None) -> Mutation:
    """``PUT …/{bundle}/split``: ``unload`` and ``splitAlgorithmName`` as query parameters, the
    boundaries (``specified_positions_divide``) as a JSON array of int64 positions."""
    from lbctl.admin.client import split_call
    from lbctl.errors import UsageError

    if algorithm == "specified_positions_divide" and not boundaries:
        raise UsageError("specified_positions_divide needs split boundaries")
    if boundaries and algorithm != "specified_positions_divide":
        raise UsageError("split boundaries need --split-algorithm-name specified_positions_divide")
    what = f"split {namespace}/{rng}"
    if algorithm:
        what += f" by {algorithm}"
    if boundaries:
        what += " at " + ", ".join(f"0x{b:08x}" for b in boundaries)
    if unload:
        what += ", then unload the new bundles"
    return Mutation(split_call(namespace, rng, unload=unload, algorithm=algorithm,
                               boundaries=boundaries), what)
