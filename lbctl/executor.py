"""The only code that changes a cluster: it sends prepared mutations, carefully.

Rules, in the order they apply:

1. **Show first.** Every request is printed exactly as it will be sent (method, URL with query,
   JSON body) before anything happens.
2. **Dry run sends nothing.** ``--dry-run`` stops after showing; the whole pipeline before it —
   reading the cluster, validating the bundle and the destination — has run.
3. **Confirm.** On a terminal lbctl asks; ``--yes`` skips the question; without a terminal and
   without ``--yes`` it refuses (:class:`~lbctl.admin.errors.MutationRefused`, exit 12).
4. **Not twice by accident.** A request identical to one the journal shows as sent within the
   grace period (``loadBalancerSheddingGracePeriodMinutes``, 30 min by default: Pulsar would not
   move the bundle again before it ends) is refused with the time it was sent; ``--force`` sends it
   anyway. A dry run only warns.
5. **Journal.** Before each request a ``sending`` line, after it a ``done``/``failed`` line, are
   appended to a JSON-lines journal (``--journal FILE``, else ``$LBCTL_JOURNAL``, else
   ``$XDG_STATE_HOME/lbctl/journal.jsonl``): one JSON object per line, ``time`` in RFC 3339 UTC
   with milliseconds (``lbctl journal`` prints it), written crash-safely
   (:func:`lbctl.safe.files.append_record`; file 0600, directory 0700). The journal holds method,
   URL and body — never a header, so never a credential. If it cannot be written before a request,
   nothing is sent; if the outcome of an applied request cannot be written, the run stops with
   "applied, but not journaled" and a non-zero exit (:class:`~lbctl.errors.NotJournaled`).
6. **No blind retry.** Each mutation is sent once (the client never retries a mutation); the first
   failure stops the run and is reported with its exit code, saying which requests had been sent.
   Ctrl-C while a request is in flight says it may have been applied (exit 130).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from msgspec import UNSET

from lbctl.admin.client import AdminClient, Call
from lbctl.admin.errors import AdminError
from lbctl.errors import ConfigError, Interrupted, MutationRefused, NotJournaled
from lbctl.model.wire.journal import JournalRecord, format_time, seconds_of
from lbctl.safe.redact import url_without_userinfo
from lbctl.safe.text import display_width

#: where a request line may break when it does not fit: before its query string, each further
#: query parameter and its body — never inside a path, a bundle or a broker name
_REQUEST_BREAKS = re.compile(r"(?=[?&])|(?=  body: )")


def request_lines(heading: str, admin_url: str, items: Sequence[tuple[str, str]],
                  width: int | None = -1) -> list[str]:
    """The requests a command is about to send (or would), each with what it does, fitted to
    ``width`` screen columns as the tables are: whole when every line fits; else the admin URL
    every request starts with is said once in ``heading`` (as a table names the broker-name
    suffix it left out), a request that still does not fit breaks before its query parameters
    and its body, and its ``# …`` comment goes under it. walk18: the lines ran to 160 columns,
    the URL and the comment on one line. The requests themselves (journal, ``-o json``) stay
    whole. ``width`` -1: the terminal's (``$COLUMNS``, else 80 when piped, never below 40);
    None: each request whole on one line, for a log whose every line is a record (the watcher's
    apply, walk21). Columns are screen columns (:func:`~lbctl.safe.text.display_width`, as the
    tables and :func:`lbctl.apply.runner.fit_line` measure): a ``#`` summary naming a broker
    ``東京-1`` takes 6, not 4 (walk21)."""
    whole = [f"  {request}    # {summary}" for request, summary in items]
    if width is None:
        return [heading + ":", *whole]
    if width < 0:
        width = max(40, shutil.get_terminal_size((80, 24)).columns)
    if all(display_width(x) <= width for x in whole):  # a wide terminal: each as sent, one a line
        return [*_wrap_words(heading + ":", width, "", "    "), *whole]
    base = url_without_userinfo(admin_url).rstrip("/")
    common = bool(items) and all(r.partition(" ")[2].startswith(base + "/") for r, _ in items)
    # the heading is fitted too, broken at blanks (the URL whole), continued 4 columns in: at 40
    # columns "lbctl would send N request(s) to URL:" ran past the width (walk21, walk22)
    out = _wrap_words(heading + (f" to {base}:" if common else ":"), width, "", "    ")
    for request, summary in items:
        method, _, rest = request.partition(" ")
        text = f"{method} {rest[len(base):] if common else rest}"
        one = f"  {text}    # {summary}"
        if display_width(one) <= width:
            out.append(one)
            continue
        line = "  "
        for part in _REQUEST_BREAKS.split(text):
            if line.strip() and display_width(line) + display_width(part.strip()) > width:
                out.append(line)
                line = "      "
            line += part.strip() if line.isspace() else part
        out.append(line)
        out += _wrap_words(f"# {summary}", width, "      ", "        ")
    return out


def _wrap_words(text: str, width: int, first: str, rest: str) -> list[str]:
    """``text`` broken at blanks only into lines of at most ``width`` screen columns (a word
    longer than that stays whole on its own line), the first led by ``first``, the others by
    ``rest``: textwrap's ``break_long_words=False`` wrap, measured by
    :func:`~lbctl.safe.text.display_width` instead of characters."""
    lines: list[str] = []
    cur = first
    for word in text.split():
        if cur.strip() and display_width(cur) + 1 + display_width(word) > width:
            lines.append(cur)
            cur = rest
        cur += (" " if cur.strip() else "") + word
    if cur.strip():
        lines.append(cur)
    return lines


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


#: rule 3's one line, the same for every command that changes a cluster (docs/exit-codes.md)
NOT_A_TERMINAL = ("refusing to change the cluster without confirmation: not a terminal; pass "
                  "--yes to send, or --dry-run to only show the requests")


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
        force: bool = False,
        warn: Callable[[str], None] | None = None,
        grace_minutes: float | None = None,
    ):
        self.client = client
        self.dry_run = dry_run
        self.yes = yes
        self.interactive = interactive
        self.confirm = confirm
        self.show = show
        self.journal = journal or default_journal()
        from lbctl.safe.files import refuse_link

        # $LBCTL_JOURNAL's too: it is read (repeats) and appended to
        refuse_link(self.journal, error=lambda m: ConfigError(f"{m}; nothing was sent"))
        self.clock = clock
        self.run_id = uuid.uuid4().hex[:12]
        self.force = force
        self.warn = warn or (lambda _line: None)
        if grace_minutes is None:
            from lbctl.config import SETTINGS_BY_NAME

            grace_minutes = float(SETTINGS_BY_NAME["loadBalancerSheddingGracePeriodMinutes"].default)
        self.grace_minutes = grace_minutes

    def run(self, mutations: Sequence[Mutation]) -> list[Outcome]:
        requests = [m.call.describe(self.client.admin_url) for m in mutations]
        verb = "would send" if self.dry_run else "will send"
        for line in request_lines(f"lbctl {verb} {len(mutations)} request(s)", self.client.admin_url,
                                  [(r, m.summary) for m, r in zip(mutations, requests, strict=True)]):
            self.show(line)
        repeats = self._repeats(mutations)
        if self.dry_run:
            for line in repeats:
                self.warn(line)
            self.show("dry run: nothing was sent")
            return [Outcome(m, r, "dry-run") for m, r in zip(mutations, requests, strict=True)]
        self.refuse_repeats(repeats)
        self._confirm(len(mutations))
        self._check_journal()
        outcomes: list[Outcome] = []
        for i, m in enumerate(mutations):
            outcomes.append(self.send(m, earlier=i))
        return outcomes

    # ---- building blocks (``lbctl apply`` sends a plan one action at a time with these) -------
    def refuse_repeats(self, repeats: Sequence[str]) -> None:
        """Rule 4: refuse requests the journal shows within the grace period, unless ``force``."""
        if repeats:
            if not self.force:
                raise MutationRefused(repeats[0] + "; nothing was sent (--force sends it again)")
            for line in repeats:
                self.warn(line + "; sending again (--force)")

    def repeats(self, mutations: Sequence[Mutation]) -> list[str]:
        """Lines about each request the journal shows as sent within the grace period."""
        return self._repeats(mutations)

    def ask(self, question: str) -> None:
        """Rule 3 for one question (``--yes`` answers it; no terminal refuses)."""
        self._confirm(0, question)

    def open_journal(self) -> None:
        """Create (0600) or repair the journal and prove it writable, before anything is sent."""
        self._check_journal()

    def send(self, m: Mutation, *, earlier: int = 0, extra: dict[str, Any] | None = None,
             raise_errors: bool = True) -> Outcome:
        """Send one mutation (rules 5 and 6): ``sending`` journaled before, ``done``/``failed``
        after, each record carrying ``extra``. A failure raises (``raise_errors``) or comes back as
        a ``failed`` outcome."""
        r = m.call.describe(self.client.admin_url)
        note = f"; {earlier} earlier request(s) were applied" if earlier else ""
        try:
            self._journal(m, "sending", extra=extra)
        except (OSError, ConfigError) as e:
            raise ConfigError(f"cannot write the journal: {e}; {r} was not sent{note}") from None
        try:
            resp = self.client.request(m.call)
        except AdminError as e:
            self._journal_outcome(m, r, "failed", status=e.status, error=str(e), extra=extra)
            if not raise_errors:
                return Outcome(m, r, "failed", e.status, str(e))
            raise type(e)(f"{e}{note}", status=e.status, sent=e.sent) from None
        except KeyboardInterrupt:
            with contextlib.suppress(Exception):
                self._journal(m, "interrupted", extra=extra)
            raise Interrupted(f"interrupted while sending {r}: the change may have been "
                              f"applied; check the cluster before retrying{note}") from None
        self._journal_outcome(m, r, "done", status=resp.status, extra=extra)
        return Outcome(m, r, "done", resp.status)

    def note(self, record: dict[str, Any]) -> None:
        """Append a record that is not a request (a plan started, an action verified); same
        crash-safe append, same run id. ``record``'s keys are fields of
        :class:`~lbctl.model.wire.journal.JournalRecord`."""
        self._write(JournalRecord(time=format_time(self.clock()), run=self.run_id, **record))

    def _journal_outcome(self, m: Mutation, request: str, state: str, *,
                         status: int | None = None, error: str | None = None,
                         extra: dict[str, Any] | None = None) -> None:
        """The outcome line; when it cannot be written the user must know the request went out."""
        try:
            self._journal(m, state, status=status, error=error, extra=extra)
        except (OSError, ConfigError) as e:
            sent = "applied" if state == "done" else "sent (it failed)"
            raise NotJournaled(f"{request}: {sent}, but not journaled: {e}") from None

    def _repeats(self, mutations: Sequence[Mutation]) -> list[str]:
        """Lines about each request the journal shows as sent within the grace period."""
        if self.grace_minutes <= 0:
            return []
        # the grace period is cluster time: a sandbox's clock may run faster than the wall's
        speed = self.client.cluster_speed()
        since = self.clock() - self.grace_minutes * 60 / speed
        recent = recent_requests(self.journal, since)
        out = []
        for m in mutations:
            key = self._key(m)
            when = recent.get(key)
            if when is not None:
                ago = max(0.0, self.clock() - when) * speed / 60
                out.append(f"the same request ({m.summary}) was sent {ago:.0f} min ago according "
                           f"to the journal {self.journal}, within the "
                           f"{self.grace_minutes:g}-minute grace period")
        return out

    def _key(self, m: Mutation) -> tuple[str, str, str]:
        import orjson

        return (m.call.method, self.client.redact(m.call.url(self.client.admin_url)),
                orjson.dumps(m.call.body).decode())

    def _confirm(self, n: int, question: str | None = None) -> None:
        if self.yes:
            return
        if not self.interactive or self.confirm is None:
            raise MutationRefused(NOT_A_TERMINAL)
        if not self.confirm(question or
                            f"Send {n} request(s) to {self.client.redact(self.client.admin_url)}?"):
            raise MutationRefused("aborted: nothing was sent")

    def _check_journal(self) -> None:
        from lbctl.safe.files import private_dir

        try:
            private_dir(str(self.journal.parent))
            self._append(b"")  # creates it (0600), repairs a partial last line, proves writable
        except (OSError, ConfigError) as e:
            reason = e.strerror if isinstance(e, OSError) else str(e)
            raise ConfigError(f"cannot write the journal {self.journal} ({reason}); nothing "
                              "was sent (set --journal or $LBCTL_JOURNAL)") from None

    def _append(self, record: bytes) -> None:
        from lbctl.safe.files import append_record, is_json_line

        # a whole last line that merely lacks its newline is a record: kept, never cut off
        append_record(str(self.journal), record, gz=False, error=ConfigError,
                      complete=is_json_line)

    def _journal(self, m: Mutation, state: str, *, status: int | None = None,
                 error: str | None = None, extra: dict[str, Any] | None = None) -> None:
        self._write(JournalRecord(
            time=format_time(self.clock()), run=self.run_id, state=state, action=m.summary,
            method=m.call.method, url=self.client.redact(m.call.url(self.client.admin_url)),
            body=m.call.body, status=status, error=error, **(extra or {})))

    def _write(self, record: JournalRecord) -> None:
        import msgspec

        self._append(msgspec.json.encode(record) + b"\n")


def recent_requests(journal: Path, since: float, *, tail_bytes: int = 4 << 20
                    ) -> dict[tuple[str, str, str], float]:
    """(method, url, body) → when it was last sent (a ``sending`` or ``done`` line at or after
    ``since``), from the last ``tail_bytes`` of the journal; a request the broker refused (its
    ``failed`` line has a status) was never applied and does not count
    (:func:`~lbctl.sources.journal.maybe_applied`). Unreadable lines are skipped, as is a journal
    that cannot be read."""
    import orjson

    from lbctl.sources.journal import maybe_applied, read_records

    try:
        records = maybe_applied(read_records(journal, tail_bytes=tail_bytes))
    except ConfigError:
        return {}
    out: dict[tuple[str, str, str], float] = {}
    for e in records:
        when = seconds_of(e.time)
        if when is None or when < since:
            continue
        body = None if e.body is UNSET else e.body
        key = (str(e.method), str(e.url), orjson.dumps(body).decode())
        out[key] = max(when, out.get(key, when))
    return out


# --------------------------------------------------------------------------------------------
# mutations lbctl knows, and the checks made before any of them is sent
# --------------------------------------------------------------------------------------------
BUNDLE_KEYWORDS = ("LARGEST", "HOT")  # resolved by the broker (NamespacesBase.getBundleRange)


def bundle_error(full: str, e: Exception) -> str:
    """What is wrong with the bundle name ``full``, said once: the range's own error when the
    range is what is wrong (it names the range the operator typed), else the name's."""
    from lbctl.model.bundle import BundleNameError, BundleRange

    try:
        BundleRange.parse(full.rpartition("/")[2])
    except BundleNameError as inner:
        return str(inner)
    return str(e)


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
        # the model's message names the name, then the range within it; wrapped again here it
        # read "bad bundle 'X': bad bundle name 'X': bad bundle range 'X': …" (walk18): once
        raise UsageError(bundle_error(full, e)) from None
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
