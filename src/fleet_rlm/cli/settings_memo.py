"""The few settings a CLI call needs, remembered per exact set of inputs so most calls skip the settings model.

Building `Settings` (pydantic-settings: import, validation, `.env` and policy file) costs a CLI call ~0.2 s,
more than the rest of `sessions list`. What the client side needs of it is small: the data dir (where the local
server is found), the server mode, whether a model is configured, the URL policy and the server fingerprint.
Settings are a pure function of their inputs: the `FLEET_`/`DSPY_`/`DAYTONA_` environment, `HOME`, the working
directory (`.env`, `config/fleet.toml`, relative paths), the bytes of those files, the code and the installed
packages. So the facts are stored under a hash of exactly those inputs (`<cache dir>/fleet-rlm/cli-settings.json`,
0600, a few entries) and reused only when every input is the same; any change is a miss and a full load. A
`.env` that interpolates other variables (`$`) is never memoized.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from fleet_rlm.config import Settings

ENV_PREFIXES = ("FLEET_", "DSPY_", "DAYTONA_")  # every name Settings reads (tests/test_config.py holds it to that)
DOTENV = Path(".env")
POLICY_DEFAULT = Path("config/fleet.toml")
MEMO_FILE = "cli-settings.json"
KEEP = 16


@dataclass(frozen=True)
class CliSettings:
    """What the client side of a CLI call reads of the settings."""

    data_dir: Path
    cli_server: str
    model_configured: bool
    url_allow_private: bool
    fingerprint: str  # of the local server these settings want (server_stamp.fingerprint)

    @classmethod
    def of(cls, settings: Settings) -> CliSettings:
        from fleet_rlm.cli.server_stamp import fingerprint

        return cls(
            data_dir=settings.data_dir,
            cli_server=settings.cli_server,
            model_configured=settings.model_configured,
            url_allow_private=settings.url_allow_private,
            fingerprint=fingerprint(settings),
        )


def cli_settings() -> CliSettings:
    """The facts for this process's inputs: remembered, or from a full settings load (then remembered)."""
    key = inputs_key()
    if key is not None:
        found = _read().get(key)
        if isinstance(found, dict):
            with contextlib.suppress(TypeError, ValueError):
                return CliSettings(**{**found, "data_dir": Path(found["data_dir"])})
    from fleet_rlm.config import load_settings

    facts = CliSettings.of(load_settings())  # raises ConfigError on bad input: never remembered
    if key is not None:
        _remember(key, facts)
    return facts


def inputs_key() -> str | None:
    """Hash of everything Settings are built from; None when that cannot be pinned down (then no memo)."""
    from fleet_rlm.cli.server_stamp import code_stamp

    try:
        cwd = os.getcwd()
        dotenv = _file_bytes(DOTENV)
        policy = _file_bytes(Path(os.environ.get("FLEET_CONFIG") or POLICY_DEFAULT).expanduser())
    except OSError:
        return None
    if dotenv is not None and b"$" in dotenv:
        return None
    env = sorted((name, value) for name, value in os.environ.items() if name.upper().startswith(ENV_PREFIXES))
    packages = os.stat(Path(typer.__file__ or "").parents[1]).st_mtime_ns  # site-packages: changes on (un)install
    blob = json.dumps(
        [env, os.environ.get("HOME"), cwd, _digest(dotenv), _digest(policy), code_stamp(), packages, sys.version]
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def memo_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fleet-rlm" / MEMO_FILE


def _file_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read() -> dict[str, Any]:
    try:
        fd = os.open(memo_path(), os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return {}
    try:
        with os.fdopen(fd, "rb") as handle:
            body = json.loads(handle.read(1 << 20))
    except (OSError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def _remember(key: str, facts: CliSettings) -> None:
    """Add the entry (newest last, the oldest dropped beyond KEEP); atomic replace, private file; best effort."""
    path = memo_path()
    entries = {name: value for name, value in _read().items() if name != key}
    entries[key] = {**asdict(facts), "data_dir": str(facts.data_dir)}
    kept = dict(list(entries.items())[-KEEP:])
    tmp = path.with_name(f".{MEMO_FILE}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(kept, handle)
        os.replace(tmp, path)
