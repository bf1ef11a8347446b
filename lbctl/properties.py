"""Java ``.properties`` files, as Pulsar's ``broker.conf`` and ``client.conf`` are written.

``key=value`` (or ``key:value``) lines, ``#``/``!`` comments, surrounding blanks trimmed. Reading
errors become one-line :class:`~lbctl.errors.ConfigError` messages that name the file and its role.
"""

from __future__ import annotations

from pathlib import Path

from lbctl.errors import ConfigError


def read_properties(path: str | Path, role: str) -> dict[str, str]:
    """Every ``key → value`` of the file, in file order (a later repeat wins).

    ``role`` names the file in messages: "broker.conf", "client.conf".
    """
    from lbctl.safe.files import read_regular

    p = Path(path).expanduser()
    # a regular file only: a FIFO or /dev/zero would hang or never end; 64 MiB is plenty
    raw = read_regular(str(p), what=f"a {role} file", limit=64 << 20,
                       error=lambda m: ConfigError(m.replace(": no such file",
                                                             f": no such {role} file")))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: {role} is not UTF-8 text") from None
    values: dict[str, str] = {}
    for row in text.splitlines():
        line = row.strip()
        if not line or line.startswith(("#", "!")):
            continue
        at = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if at < 0:
            continue
        values[line[:at].strip()] = line[at + 1 :].strip()
    return values
