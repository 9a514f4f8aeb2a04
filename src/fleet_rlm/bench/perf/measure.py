"""Measurement helpers: percentiles, wall-clock timing, peak RSS of a process tree, machine facts."""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any


def ms(seconds: float) -> float:
    return seconds * 1000.0


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100.0 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def median(values: list[float]) -> float:
    return statistics.median(values)


def timed(fn: Callable[[], Any], repeats: int, *, warmup: int = 3) -> list[float]:
    """Seconds per call of `fn`, after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return samples


def paired_delta(fn: Callable[[], Any], base: Callable[[], Any], repeats: int) -> list[float]:
    """Seconds `fn` takes beyond `base`, sampled back to back so machine noise hits both alike."""
    fn(), base()
    deltas = []
    for _ in range(repeats):
        started = time.perf_counter()
        base()
        middle = time.perf_counter()
        fn()
        deltas.append((time.perf_counter() - middle) - (middle - started))
    return deltas


def _status_kb(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (children of children included), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, stack = [], list(children.get(pid, []))
    while stack:
        child = stack.pop()
        found.append(child)
        stack.extend(children.get(child, []))
    return found


def cpu_s(pid: int, *, reaped: bool = True) -> float:
    """CPU seconds (user + system) of one process; with `reaped`, also of its children that have exited."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    ticks = [int(value) for value in fields[11:15]]  # utime stime cutime cstime
    return (sum(ticks) if reaped else ticks[0] + ticks[1]) / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """CPU seconds of `pid` and every live descendant (exited ones count through their parent's cutime)."""
    return sum(cpu_s(p) for p in [pid, *descendants(pid)])


def peak_rss_mb(pid: int) -> float:
    """Peak resident set (VmHWM) of one process, MiB."""
    return _status_kb(pid, "VmHWM") / 1024.0


def tree_peak_rss_mb(pid: int) -> float:
    """Sum of the peaks of `pid` and its live descendants, MiB (an upper bound of the tree's peak)."""
    return sum(peak_rss_mb(p) for p in [pid, *descendants(pid)])


def rss_mb(pid: int) -> float:
    return _status_kb(pid, "VmRSS") / 1024.0


def tree_rss_mb(pid: int) -> float:
    """Current resident set of `pid` and its live descendants, MiB."""
    return sum(_status_kb(p, "VmRSS") for p in [pid, *descendants(pid)]) / 1024.0


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _cpu_ticks() -> tuple[int, int] | None:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat; None where there is none."""
    try:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = [int(x) for x in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_fraction(window_s: float) -> float | None:
    """How busy the whole machine is over the next `window_s` (0..1), or None without /proc/stat."""
    before = _cpu_ticks()
    time.sleep(window_s)
    after = _cpu_ticks()
    if before is None or after is None or after[1] == before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def wait_quiet(*, below: float = 0.15, window_s: float = 0.5, timeout_s: float = 30.0) -> float | None:
    """Wait until the machine is mostly idle, so a burst measures itself and not what came before it (a
    stopped server's sandboxes being torn down, a new server's turn workers importing). Returns the busy
    fraction of the last window (None without /proc/stat); gives up after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        busy = busy_fraction(window_s)
        if busy is None or busy < below or time.monotonic() >= deadline:
            return busy


def load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def machine_info() -> dict[str, Any]:
    import dspy

    from fleet_rlm.sandbox import isolation_level

    return {
        "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "python": sys.version.split()[0],
        "dspy": getattr(dspy, "__version__", "unknown"),
        "platform": platform.platform(),
        "isolation": isolation_level(),
        "load_average_start": load_average(),
    }
