"""The converter process: reads conversion requests on stdin, answers on stdout, under resource limits.

Started by `pool` with `python -I` and an environment without the server's secrets. Before each job it sets
its own soft limits: address space (`RLIMIT_AS`, `DocumentLimits.memory_mb`) and CPU time (`RLIMIT_CPU`, the
CPU it has used so far plus `timeout_s`; the kernel's SIGXCPU ends it). A `MemoryError`, or a parse failure
while the address space peaked near the limit (lxml reports a failed allocation as a syntax error), is answered
as `document_too_large`. A job that came near the memory limit or a parser crash, or a large resident set after
a job, retires the process (it answers, then exits), so the next job starts with a clean heap. It imports only
the parsers it needs.
"""

from __future__ import annotations

import math
import resource
import sys
from typing import Any, BinaryIO

from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.docsafe import formats, wire
from fleet_rlm.runtime.docsafe.limits import FILE_UNSUPPORTED, MB, DocumentLimits, error_to_wire, too_large, unreadable
from fleet_rlm.runtime.docsafe.zipguard import check_zip, read_all_capped

RETIRE_RSS_BYTES = 256 * MB
RETIRE_AFTER_JOBS = 200
NEAR_LIMIT = 0.9


def convert(kind: str, data: bytes, *, name: str, limits: DocumentLimits) -> tuple[str, dict[str, Any]]:
    """One document to text; runs inside the limits (also callable in-process by tests of the parsers)."""
    if kind == "pdf":
        return formats.pdf_text(data, name=name, limits=limits)
    if kind == "docx":
        check_zip(data, name=name, limits=limits)
        read_all_capped(data, name=name, limits=limits)
        return formats.docx_text(data, name=name, limits=limits)
    if kind == "html":
        return formats.html_text(data.decode("utf-8", "replace"), name=name, limits=limits)
    raise ValueError(f"unknown document kind {kind!r}")


def main() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for module in ("pypdf", "docx", "bs4", "markdownify", "lxml.etree"):
        __import__(module)  # import before the first limit, and before READY, so no job pays for it
    out: BinaryIO = sys.stdout.buffer
    inp: BinaryIO = sys.stdin.buffer
    out.write(wire.READY)
    out.flush()
    jobs = 0
    while (frame := wire.read_frame(inp)) is not None:
        header, data = frame
        jobs += 1
        reply, text, retire = _run(header, data)
        retire = retire or jobs >= RETIRE_AFTER_JOBS or _rss() > RETIRE_RSS_BYTES
        reply["retire"] = retire
        wire.write_frame(out, reply, text.encode("utf-8", "replace"))
        if retire:
            return


def _run(header: dict[str, Any], data: bytes) -> tuple[dict[str, Any], str, bool]:
    limits = DocumentLimits.from_dict(header["limits"])
    name = str(header["name"])
    _set_limits(limits)
    try:
        text, info = convert(str(header["kind"]), data, name=name, limits=limits)
        return {"ok": True, "info": info}, text, _near_memory_limit(limits)
    except MemoryError:
        return {"ok": False, "error": error_to_wire(_out_of_memory(name, limits))}, "", True
    except FleetError as exc:
        if exc.code == FILE_UNSUPPORTED and _near_memory_limit(limits):
            exc = _out_of_memory(name, limits)  # lxml reports a failed allocation as a syntax error
        return {"ok": False, "error": error_to_wire(exc)}, "", _near_memory_limit(limits)
    except Exception as exc:  # a parser bug: report it, and start the next job in a fresh process
        error = (
            _out_of_memory(name, limits) if _near_memory_limit(limits) else unreadable(str(header["kind"]), name, exc)
        )
        return {"ok": False, "error": error_to_wire(error)}, "", True
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def _out_of_memory(name: str, limits: DocumentLimits) -> FleetError:
    return too_large(name, "converting it needs more memory than allowed", "memory_mb", f"{limits.memory_mb} MiB")


def _near_memory_limit(limits: DocumentLimits) -> bool:
    """The address space peaked near the limit: an allocation probably failed (also: retire this process)."""
    return _status_bytes("VmPeak") >= NEAR_LIMIT * limits.memory_mb * MB


def _set_limits(limits: DocumentLimits) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = math.ceil(usage.ru_utime + usage.ru_stime + limits.timeout_s) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, resource.RLIM_INFINITY))
    resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * MB, resource.RLIM_INFINITY))


def _rss() -> int:
    return _status_bytes("VmRSS")


def _status_bytes(field: str) -> int:
    with open("/proc/self/status", "rb") as handle:
        for line in handle:
            if line.startswith(field.encode() + b":"):
                return int(line.split()[1]) * 1024
    return 0


if __name__ == "__main__":
    main()
