"""Gate: only `sandbox/guestfs.py` may touch files by path; every other module is checked unless allow-listed.

The host must never resolve a path inside guest-writable storage (a workspace) by name: a check made before an
open proves nothing when the guest can swap a link in between. So the default is strict: any module that calls
a path-based file API (`open(`, `Path.read_text/.resolve/.iterdir/...`, `os.walk/os.stat/os.chmod/...`,
`shutil.*`, `tempfile.*`) fails this test. A module that legitimately works on HOST-ONLY files (the data dir's
database, attachments, secrets, config, the bundled UI, the worker inside the sandbox...) is listed below with
the reason; an entry `module:function` allows one function only. Adding to the list is a review decision: it
says "this code never receives a path inside a workspace". Workspace code uses `fleet_rlm.sandbox.guestfs`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.db_independent

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "fleet_rlm"

# path-based calls on `os` / `os.path`
OS_CALLS = frozenset(
    [
        "open",
        "walk",
        "listdir",
        "scandir",
        "stat",
        "lstat",
        "chmod",
        "lchmod",
        "chown",
        "lchown",
        "makedirs",
        "mkdir",
        "remove",
        "unlink",
        "rename",
        "replace",
        "rmdir",
        "removedirs",
        "symlink",
        "link",
        "readlink",
        "mkfifo",
        "mknod",
        "truncate",
        "utime",
        "access",
        "exists",
        "lexists",
        "isfile",
        "isdir",
        "islink",
        "realpath",
        "getsize",
        "getmtime",
    ]
)
# methods of pathlib.Path (and friends) that resolve a name; `.replace`/`.group`/`.walk` are too ambiguous
PATH_METHODS = frozenset(
    [
        "open",
        "read_text",
        "read_bytes",
        "write_text",
        "write_bytes",
        "iterdir",
        "glob",
        "rglob",
        "resolve",
        "mkdir",
        "touch",
        "unlink",
        "rmdir",
        "symlink_to",
        "hardlink_to",
        "chmod",
        "lchmod",
        "stat",
        "lstat",
        "exists",
        "is_file",
        "is_dir",
        "is_symlink",
        "is_fifo",
        "readlink",
        "samefile",
        "rename",
        "owner",
    ]
)
WHOLE_MODULES = frozenset({"shutil", "tempfile", "glob"})

ALLOWED: dict[str, str] = {
    # the one module allowed to touch guest-writable trees, and it does so fd-relative
    "sandbox/guestfs.py": "the fd-relative implementation itself",
    # host-only storage: no guest can write these paths or their parents
    "config.py": "reads the operator's .env / TOML policy file",
    "store/migrate.py": "the SQLite file and Alembic scripts in the data dir / package",
    "llm/secrets.py": "<data_dir>/secret.key (0600, host-only)",
    "services/attachments.py": "<data_dir>/attachments (host-only, outside every workspace)",
    "api/routes/attachments.py": "<data_dir>/attachments (host-only, outside every workspace)",
    "api/multipart_upload.py": "spools uploads to host-only temporary files",
    "services/startup.py": "creates and probes the data dir itself",
    "services/status.py": "probes host binaries and the data dir",
    "api/spa.py": "serves the bundled UI build from the package",
    "ui/__init__.py": "locates the bundled UI build in the package",
    "runtime/context/sources.py:load_file": "attachments live in <data_dir>/attachments (host-only)",
    "runtime/context/convert.py:check_upload": "an upload spooled to host-only storage",
    "runtime/docsafe/zipguard.py": "opens members of an in-memory zip archive, not files",
    "runtime/docsafe/pool.py": "locates the package for the converter subprocess",
    "runtime/docsafe/worker.py": "the converter subprocess reads its own /proc/self",
    # context documents, fetched URLs and clones: <data_dir>/sessions/<id>/context, host-only, read-only to the
    # guest through a per-sandbox view (issue 13 item 4)
    "sandbox/context_view.py": "sessions/<id>/context and sandboxes/<id> views: host-only, bound read-only",
    "sandbox/worker_code.py": "sandbox-code/<version>: the worker's modules and bytecode, host-only, bound read-only",
    "sandbox/worker_cells.py": "its seed in sandbox-code/<version>: host-written, bound read-only in the guest",
    "sandbox/daytona/context.py": "reads the host-only session context directory to upload it",
    "runtime/context/documents.py": "writes the per-session context directory (host-only, read-only to the guest)",
    "runtime/context/repo.py": "clones into the per-session context directory (host-only) via temporary dirs",
    "runtime/context/kept.py": "reads a held document by name in the session context dir (host-only)",
    "services/session_context.py": "removes a dropped source's files from the session context dir (host-only)",
    "runtime/mcp_client.py:_errlog": "a stdio MCP server's stderr log in <data_dir>/logs (host-only)",
    "services/share_redact.py": "resolves the data dir, workspace root and home only to redact them; opens nothing",
    "optimize/modules.py": "reads program instruction files bundled in the package",
    "errors/catalog.py": "reads the error table bundled in the package",
    "errors/scan.py": "scans the package's own source for raised error codes",
    "llm/pricing.py:cost_map": "reads the price map bundled in the installed LiteLLM package",
    "skills/cards_loader.py": "reads bundled skill cards",
    "sandbox/launcher.py": "host system paths for bwrap binds and /proc task counts; never a workspace path",
    "sandbox/status.py": "locates the bwrap binary",
    "sandbox/daytona/options.py": "reads the operator's CA bundle",
    # inside the sandbox: the guest's own view, not host code
    "sandbox/worker.py": "runs inside the sandbox",
    "sandbox/worker_capture.py": "runs inside the sandbox",
    "sandbox/worker_lines.py": "runs inside the sandbox",
    "sandbox/worker_procs.py": "runs inside the sandbox (its own /proc)",
    # operator tools and test fakes: no workspace input
    "bench": "benchmark datasets and reports on the operator's disk",
    "cli": "the operator's own files (exports, prompts history, server logs)",
    "testing": "fakes (the fake Daytona server's file API is the remote sandbox's filesystem)",
}


def _module(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


def _allowed(module: str, function: str | None) -> bool:
    if module in ALLOWED or (function and f"{module}:{function}" in ALLOWED):
        return True
    return any(module.startswith(prefix + "/") for prefix in ALLOWED if "." not in prefix)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _offence(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Name):
        return "open(" if func.id == "open" else None
    if not isinstance(func, ast.Attribute):
        return None
    base = _dotted(func.value)
    if base in ("os", "os.path") and func.attr in OS_CALLS:
        return f"{base}.{func.attr}("
    if base in WHOLE_MODULES or (base == "io" and func.attr == "open"):
        return f"{base}.{func.attr}("
    if base in ("guestfs", "os", "os.path", "ast", "re") or base.endswith(".guestfs"):
        return None
    return f".{func.attr}(" if func.attr in PATH_METHODS else None


def offences() -> list[str]:
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        if module.startswith("ui/dist"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions: dict[int, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    functions.setdefault(id(inner), node.name)
        for node in ast.walk(tree):
            what = _offence(node) if isinstance(node, ast.Call) else None
            if what and not _allowed(module, functions.get(id(node))):
                found.append(f"{module}:{node.lineno}: {what}")
    return found


def test_only_guestfs_touches_files_by_path() -> None:
    found = offences()
    assert not found, (
        "path-based file access outside sandbox/guestfs.py (use fleet_rlm.sandbox.guestfs for anything a sandbox "
        "can write; if this code only ever sees host-only files, add it to ALLOWED with the reason):\n"
        + "\n".join(found)
    )


def test_the_gate_catches_what_it_claims(tmp_path: Path) -> None:
    sample = "from pathlib import Path\nimport os, shutil\n" + "\n".join(
        [
            "open('x')",
            "Path('x').read_text()",
            "Path('x').resolve()",
            "os.walk('.')",
            "os.chmod('x', 0)",
            "shutil.copy('a', 'b')",
            "Path('.').iterdir()",
            "'a'.replace('a', 'b')",
            "guestfs.walk(root)",
        ]
    )
    calls = [node for node in ast.walk(ast.parse(sample)) if isinstance(node, ast.Call)]
    flagged = sorted(what for call in calls if (what := _offence(call)))
    assert flagged == sorted(
        ["open(", ".read_text(", ".resolve(", "os.walk(", "os.chmod(", "shutil.copy(", ".iterdir("]
    )
    assert not _allowed("runtime/workspace.py", None) and not _allowed("services/volume.py", "list_tree")
    assert _allowed("runtime/context/sources.py", "load_file") and not _allowed(
        "runtime/context/sources.py", "load_path"
    )
