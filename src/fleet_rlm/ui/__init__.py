"""Where the web UI's production build lives.

The React app in src/frontend is built into `fleet_rlm/ui/dist/` and committed (and shipped in the wheel), so
`fleet web` serves the UI without Node. `make ui-check` proves the committed build matches the sources.
"""

from __future__ import annotations

from pathlib import Path

DIST_DIR = Path(__file__).resolve().parent / "dist"


def dist_dir() -> Path:
    """The build output directory (it may be missing in a checkout that never built the UI)."""
    return DIST_DIR


def index_file() -> Path | None:
    """The SPA's index.html, or None when the UI was not built."""
    index = DIST_DIR / "index.html"
    return index if index.is_file() else None
