"""The local worker's code as a sandbox runs it: its stdlib-only modules, byte-compiled once.

A sandbox cannot keep bytecode (`-B`, read-only binds), so every cold start compiled worker.py and its
siblings from source again: ~5 ms of each start's ~28 ms of CPU, paid once per session. Instead the host
writes the modules and their bytecode (unchecked-hash .pyc: valid without a stat of the source) into a
directory named by their content hash under the data dir, once per worker version; bubblewrap binds it
read-only at /opt/fleet. Beside them goes the seed of compiled cells every sandbox runs (worker_cells.py:
dspy.RLM's facade, ~2 ms of compiling per sandbox otherwise). The directory is built beside its final name and
renamed into place, so concurrent processes (the API, turn workers) never see a half-written one. Nothing a
guest can write is read here.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import py_compile
import shutil
import sys
import tempfile
import threading
from pathlib import Path

from fleet_rlm.sandbox.worker_cells import SEED_FILE, write_seed

SANDBOX_DIR = Path(__file__).resolve().parent
WORKER_MODULES = (
    "worker.py",
    "worker_capture.py",
    "worker_cells.py",
    "worker_globals.py",
    "worker_guard.py",
    "worker_json.py",
    "worker_procs.py",
    "worker_state.py",
    "worker_tracebacks.py",
)
"""The modules a local sandbox loads (Daytona adds worker_lines.py, its text transport)."""

GUEST_CODE_DIR = "/opt/fleet"
"""Where the code directory appears inside bubblewrap."""

UNCHECKED = py_compile.PycInvalidationMode.UNCHECKED_HASH
_BOOT = (
    "import gc; gc.disable(); import sys; sys.path.insert(0, {dir!r}); import worker; del sys.path[0]; "
    "worker.main(sys.argv[1:])"
)
"""The cyclic collector is off while the worker starts (its imports make only live objects; collecting them was
~0.5 ms of a ~10 ms start) and back on before any guest code runs (`worker.main`)."""


def boot_args(code_dir: str) -> list[str]:
    """The interpreter arguments that start the worker from `code_dir` (its bytecode, not its source)."""
    return ["-c", _BOOT.format(dir=code_dir)]


def seed_cells() -> tuple[str, ...]:
    """The cells every local sandbox runs: dspy.RLM's facade, installed at the start of each RLM forward."""
    from dspy.primitives.facade import SHIM_SETUP

    return (SHIM_SETUP,)


@functools.cache
def _version() -> str:
    digest = hashlib.sha256(sys.version.encode() + b"\0")  # the bytecode and the seed are this build's
    for name in WORKER_MODULES:
        digest.update(name.encode() + b"\0" + (SANDBOX_DIR / name).read_bytes() + b"\0")
    for source in seed_cells():
        digest.update(source.encode() + b"\0")
    return digest.hexdigest()[:16]


_build_lock = threading.Lock()
"""One build at a time in this process: CPython 3.11 (seen on 3.11.7) can corrupt its AST converter's shared
recursion count when two threads convert at once ("AST constructor recursion depth mismatch", gh-106905), and
the seed's compile is such a conversion; a pool starting two spares on a new data dir did exactly that. Other
processes building the same version are safe: each builds beside the target and renames into place."""


def compiled_worker(data_dir: Path) -> Path:
    """The directory holding this worker version's modules and bytecode (built when missing)."""
    target = data_dir / "sandbox-code" / _version()
    if target.is_dir():
        return target
    with _build_lock:
        return target if target.is_dir() else _build(target)


def _build(target: Path) -> Path:
    parent = target.parent
    parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(dir=parent, prefix=".build-"))
    try:
        for name in WORKER_MODULES:
            source = building / name
            shutil.copyfile(SANDBOX_DIR / name, source)
            cached = importlib.util.cache_from_source(str(source))
            py_compile.compile(str(source), cached, doraise=True, invalidation_mode=UNCHECKED)
        write_seed(building / SEED_FILE, seed_cells())
        for path in [building, *building.rglob("*")]:
            os.chmod(path, 0o755 if path.is_dir() else 0o644)  # the sandbox's own uid reads it
        os.rename(building, target)
    except OSError:
        if not target.is_dir():  # not lost to a concurrent build of the same version
            raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return target
