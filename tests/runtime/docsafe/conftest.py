"""Bomb files are built once per test session in tmp (a few MB each; the 1 GiB stream is never written inflated)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.runtime.docsafe import bombs


@pytest.fixture(scope="session")
def docx_bomb(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return bombs.docx_bomb(tmp_path_factory.mktemp("bombs") / "bomb.docx").read_bytes()


def peak_rss_reset() -> int:
    """Reset this process's VmHWM to its current RSS (returned), so `peak_rss() - that` is the growth since."""
    Path("/proc/self/clear_refs").write_text("5")
    return status_bytes("VmRSS")


def peak_rss(pid: int | str = "self") -> int:
    """VmHWM (peak resident set) of a process, bytes."""
    return status_bytes("VmHWM", pid)


def status_bytes(field: str, pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")
