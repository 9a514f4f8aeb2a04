"""Guest code writing forged frames to its protocol fd (issue #40, class 6).

A cell finds the worker's channel and writes frames of its own: a 32 MB flood of `call` frames, a header nested
beyond the recursion limit, too many values, invalid UTF-8, impossible lengths. Each ends *that* sandbox with a
`[sandbox reset]` naming the protocol error; the host stays flat, and another session's sandbox on the same pool
keeps running and keeps its state. The bounded decode itself is checked on bytes (`frame_limits.py`), including
that its size bound is an upper bound of what CPython really allocates.
"""

from __future__ import annotations

import json
import threading
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from dspy.primitives.code_interpreter import CodeExecutionError

from fleet_rlm.sandbox import SandboxOptions
from fleet_rlm.sandbox.factory import interpreter_factory
from fleet_rlm.sandbox.frame_limits import FrameLimits, decode_header
from fleet_rlm.sandbox.inflow import Inflow
from fleet_rlm.sandbox.pool import SandboxPool
from fleet_rlm.sandbox.protocol import FrameError
from tests.sandbox.conftest import MakeInterpreter

MB = 1024 * 1024
HOST_GROWTH_MAX = 64 * MB

FORGE = """
import gc, json, os, struct
channel = next(o for o in gc.get_objects() if type(o).__name__ == 'Channel')

def forge(data):
    view = memoryview(data)
    with channel.lock:
        while view:
            view = view[os.write(channel.out_fd, view):]

def frame(raw, body_len=0):
    return struct.pack('>II', len(raw), body_len) + raw
"""

FLOOD = """
sent, i = 0, 10**6
while sent < 32 * 1024 * 1024:
    raw = json.dumps({'t': 'call', 'id': i, 'name': 'llm_query', 'args': ['x'], 'kwargs': {}}).encode()
    forge(frame(raw))
    sent, i = sent + 8 + len(raw), i + 1
"""

ATTACKS = {
    "deep": ("forge(frame(b'[' * 200_000 + b']' * 200_000))", "nests deeper than 64"),
    "values": ("forge(frame(b'{\"t\":\"call\",\"args\":[' + b'[],' * 600_000 + b'[]]}'))", "more than 500000 JSON"),
    "utf8": ('forge(frame(b\'{"t":"call","name":"\\xff\\xfe"}\'))', "not valid JSON"),
    "huge_header": ("forge(struct.pack('>II', 0xFFFFFFF0, 0))", "header length"),
    "body": ('forge(frame(b\'{"t":"call"}\', body_len=60 * 1024 * 1024))', "body length"),
}


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _peak_while(work: Callable[[], str]) -> tuple[str, int]:
    """What `work` returns, and this process's RSS growth at its peak while it ran (sampled every 20 ms)."""
    base, peak, done = _rss(), [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _rss() - base)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = work()
    finally:
        done.set()
        sampler.join()
    return result, peak[0]


def _run(interp: object, code: str) -> str:
    try:
        return str(interp.execute(code))  # type: ignore[attr-defined]
    except CodeExecutionError as exc:
        return f"ERROR: {exc}"


# --- the bounded decode, on bytes ------------------------------------------------------------------------------
def test_a_nesting_beyond_the_recursion_limit_is_a_frame_error() -> None:
    for raw in (b"[" * 100_000 + b"]" * 100_000, b'{"t":"x","a":' + b"[" * 65 + b"]" * 65 + b"}"):
        with pytest.raises(FrameError, match="nests deeper"):
            decode_header(raw)
    # brackets inside strings are text, at any count; and they cannot hide real nesting
    assert decode_header(json.dumps({"t": "x", "a": "[" * 10_000 + "]]]" + '\\"'}).encode()).header["t"] == "x"
    masked = b'{"t":"x","a":' + b'["]",' * 100 + b"0" + b',"["]' * 100 + b"}"
    with pytest.raises(FrameError, match="nests deeper"):
        decode_header(masked)


@pytest.mark.parametrize(
    "raw",
    [b'{"t":"x","a":"\xff"}', b"[1, 2]", b'{"t": 5}', b'{"t":"x"', b"\x00", b'{"t":"x","n":' + b"9" * 5000 + b"}"],
)
def test_every_decode_failure_is_a_frame_error(raw: bytes) -> None:
    with pytest.raises(FrameError):
        decode_header(raw)


def test_an_unterminated_string_of_escapes_is_measured_in_linear_time() -> None:
    started = time.perf_counter()
    with pytest.raises(FrameError):
        decode_header(b'{"t":"' + b'\\"' * 4_000_000)
    assert time.perf_counter() - started < 2


@pytest.mark.parametrize(
    "value",
    [
        [[] for _ in range(100_000)],
        [{} for _ in range(100_000)],
        [f"s{i % 90}" for i in range(100_000)],
        [1.5] * 100_000,
        {f"k{i}": {} for i in range(50_000)},
        ["a" * 50 + "\U0001f600"] * 5_000,
        "é" * 1_000_000,
    ],
    ids=["lists", "dicts", "strings", "floats", "keys", "astral", "latin"],
)
def test_the_size_bound_covers_what_the_decode_allocates(value: object) -> None:
    raw = json.dumps({"t": "call", "args": [value]}, ensure_ascii=False).encode()
    tracemalloc.start()
    try:
        decoded = decode_header(raw)
        allocated, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert allocated <= decoded.cost, (allocated, decoded.cost)


def test_too_many_values_are_refused_before_decoding() -> None:
    with pytest.raises(FrameError, match="more than 500000 JSON values"):
        decode_header(b'{"t":"x","a":[' + b"[]," * 600_000 + b"[]]}")
    with pytest.raises(FrameError, match="more than 10 JSON values"):
        decode_header(json.dumps({"t": "x", "a": ["s"] * 20}).encode(), FrameLimits(max_values=10))


def test_inflow_holds_and_paces() -> None:
    limits = FrameLimits(held_frames=2, held_decoded=100, frames_per_second=10, decoded_per_second=10**9)
    inflow = Inflow(limits)
    releases = [inflow.release_for(10) for _ in range(2)]
    assert inflow.admit(10) and inflow.admit(10) and not inflow.try_admit(10)
    admitted = threading.Event()
    threading.Thread(target=lambda: inflow.admit(10) and admitted.set(), daemon=True).start()
    assert not admitted.wait(0.2)  # the reader waits while two frames are held
    releases[0]()
    assert admitted.wait(5)
    started = time.monotonic()
    for _ in range(20):  # the bucket holds 10 frames (3 used, ~2 refilled): the rest are paced at 10 a second
        releases[1]()
        inflow.admit(10)
    assert time.monotonic() - started >= 0.8
    closed = Inflow(FrameLimits(held_frames=1))
    closed.admit(1)
    threading.Timer(0.1, closed.close).start()
    assert closed.admit(1) is False  # close wakes a waiting reader


# --- forged frames from a real sandbox --------------------------------------------------------------------------
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_forged_frames_reset_only_that_sandbox(make_interpreter: MakeInterpreter, attack: str) -> None:
    code, reason = ATTACKS[attack]
    interp = make_interpreter()
    interp.execute("kept = 1")
    out = _run(interp, FORGE + code)
    assert out.startswith("ERROR: [sandbox reset] the sandbox broke the protocol"), out[:300]
    assert reason in out, out[:300]
    assert "Traceback" not in out
    assert interp.execute("print(6 * 7)") == "42"


def test_a_call_flood_keeps_the_host_flat_and_other_sessions_running(tmp_path: Path, backend: str) -> None:
    """32 MB of forged `call` frames (~415,000 calls; 860 MB of host growth before) from one session, while
    another session of the same pool runs cells: the flooder is reset after `cell_frames` frames, the host grows
    by less than 64 MB, and the other session's cells run and its state survives."""
    options = SandboxOptions(data_dir=tmp_path, isolation=backend, cell_timeout_s=60)  # type: ignore[arg-type]
    pool = SandboxPool(options, size=0)
    try:
        flooder = interpreter_factory(pool=pool, session_id="flooder")()
        neighbour = interpreter_factory(pool=pool, session_id="neighbour")()
        flooder.tools["llm_query"] = lambda prompt: "answer"
        neighbour.execute("state = 'kept'")
        flooder.execute("x = 1")
        results: list[str] = []
        stop = threading.Event()

        def neighbour_cells() -> None:
            while not stop.is_set():
                results.append(str(neighbour.execute("state + '!'")))

        other = threading.Thread(target=neighbour_cells, daemon=True)
        other.start()
        try:
            out, growth = _peak_while(lambda: _run(flooder, FORGE + FLOOD))
        finally:
            stop.set()
            other.join(timeout=30)
        assert out.startswith("ERROR: [sandbox reset] the sandbox broke the protocol (more than 10000 frames")
        assert growth < HOST_GROWTH_MAX, f"host grew {growth / MB:.1f} MB"
        assert results and set(results) == {"kept!"}
        assert neighbour.execute("state") == "kept"
        assert flooder.execute("print(6 * 7)") == "42"
    finally:
        pool.shutdown()
