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
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such {role} file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, expected a {role} file") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read {role} ({e.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: {role} is not UTF-8 text") from None
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        at = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if at < 0:
            continue
        values[line[:at].strip()] = line[at + 1 :].strip()
    return values
