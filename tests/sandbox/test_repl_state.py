"""Durable REPL state: after each transcript cell the worker reports the REPL's variables as data
(sandbox/worker_state.py), the host checks every text (sandbox/repl_state.py) and a fresh sandbox loads them back.
Every supported type round-trips exactly; what is not plain data is named with why; unchanged values are not
sent again; a guest forging its report (deep, huge, malformed) only loses those values."""

from __future__ import annotations

import json
import math

import pytest

from fleet_rlm.sandbox import worker_state
from fleet_rlm.sandbox.repl_state import MAX_SNAPSHOT_CHARS, ReplStateTracker, check_text
from tests.sandbox.conftest import MakeInterpreter

DEFINE = """
import json as js
import socket
none, yes, small, big, ratio = None, True, 7, -2**80, 1.25
nan, inf, cplx = float('nan'), float('-inf'), 3-4j
text, raw, buf = 'héllo ✓', b'\\x00\\xff', bytearray(b'ab')
items, pair, bag, frozen = [1, [2, [3]]], (1, 'a'), {1, 2}, frozenset({'x'})
plain, mixed = {'k': {'n': [1.5, None]}, 'o': 1}, {1: (2, 3), (4, 5): 'six', None: b'z'}
sock = socket.socket()
def helper(): return 1
class Thing: pass
thing = Thing()
cyclic = []; cyclic.append(cyclic)
"""

CHECK = """
import math
assert none is None and yes is True and small == 7 and big == -2**80 and ratio == 1.25
assert math.isnan(nan) and inf == float('-inf') and cplx == 3-4j
assert text == 'héllo ✓' and raw == b'\\x00\\xff' and type(buf) is bytearray and buf == b'ab'
assert items == [1, [2, [3]]] and pair == (1, 'a') and bag == {1, 2} and frozen == frozenset({'x'})
assert plain == {'k': {'n': [1.5, None]}, 'o': 1} and mixed == {1: (2, 3), (4, 5): 'six', None: b'z'}
assert js.dumps([1]) == '[1]'
print('all back')
"""
KEPT = {
    "js", "socket", "none", "yes", "small", "big", "ratio", "nan", "inf", "cplx", "text", "raw", "buf",
    "items", "pair", "bag", "frozen", "plain", "mixed",
}  # fmt: skip


def test_every_supported_type_round_trips_into_a_fresh_sandbox(make_interpreter: MakeInterpreter) -> None:
    first = make_interpreter(returns="transcript")
    first.execute(DEFINE)
    state = first.last_state
    assert state is not None
    assert set(state.variables) == KEPT
    assert set(state.skipped) == {"sock", "helper", "Thing", "thing", "cyclic"}
    assert "socket" in state.skipped["sock"] and "deeper" in state.skipped["cyclic"]
    assert set(state.blobs) == set(state.variables.values())  # first report: every text is new

    second = make_interpreter(returns="transcript")
    second.restore_state({name: state.blobs[h] for name, h in state.variables.items()})
    assert second.execute(CHECK) == "all back"
    assert second.last_restore == (sorted(KEPT, key=list(state.variables).index), {})
    assert second.last_state is not None  # the same texts: the same hashes (CHECK imported math besides)
    assert {k: v for k, v in second.last_state.variables.items() if k != "math"} == state.variables


def test_unchanged_values_are_not_sent_again(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(returns="transcript")
    interp.execute("a = list(range(1000)); b = 'x'")
    first = interp.last_state
    interp.execute("b = 'y'")
    second = interp.last_state
    assert first is not None and second is not None
    assert second.variables["a"] == first.variables["a"] and second.variables["b"] != first.variables["b"]
    assert set(second.blobs) == {second.variables["b"]}  # only the changed value crossed and is new
    interp.execute("del a")
    third = interp.last_state
    assert third is not None and set(third.variables) == {"b"} and not third.blobs


def test_a_failed_restore_is_named(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(returns="transcript")
    interp.restore_state({"ok": "[1]", "gone": '{"m":"no_such_module_here"}', "bad": '{"zz":1}'})
    interp.execute("print(ok)")
    assert interp.last_restore is not None
    restored, failed = interp.last_restore
    assert restored == ["ok"] and set(failed) == {"gone", "bad"}
    assert "ModuleNotFoundError" in failed["gone"] and "unknown tag" in failed["bad"]


def test_values_past_the_bounds_are_named_not_kept(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(returns="transcript")
    interp.execute("deep = []\nx = deep\nfor _ in range(40):\n    x.append([]); x = x[0]\nhuge = 'h' * 5_000_000")
    state = interp.last_state
    assert state is not None
    assert "deeper than 32" in state.skipped["deep"] and "MiB" in state.skipped["huge"]


@pytest.mark.parametrize(
    "forged",
    [
        "[" * 100_000 + "]" * 100_000,  # nesting past the decoder's recursion
        '{"o":' * 60 + "1" + "}" * 60,  # tags past MAX_DEPTH
        '"' + "a" * (worker_state.MAX_VALUE_CHARS + 10) + '"',  # over the size bound
        "[" + ",".join(["[]"] * 300_000) + "]",  # too many values
        '{"d":[[[1],2]]}',  # an unhashable key
        '{"s":[[1]]}',  # an unhashable set member
        '{"m":"os; rm -rf /"}',  # a module tag that is no module name
        '{"x":1}',  # an unknown tag
        "NaN-ish garbage",
        '{"b":"!!!"}',  # bad base64
    ],
)
def test_a_forged_report_is_refused_value_by_value(forged: str) -> None:
    assert check_text(forged) is not None
    tracker = ReplStateTracker()
    state = tracker.update({"state": {"changed": {"good": "[1]", "evil": forged}, "kept": [], "skipped": {}}})
    assert state is not None
    assert set(state.variables) == {"good"} and "evil" in state.skipped


def test_a_forged_report_cannot_pass_the_snapshot_bound() -> None:
    chunk = json.dumps("v" * (worker_state.MAX_VALUE_CHARS - 10))
    changed = {f"v{i}": chunk[:-2] + str(i) + '"' for i in range(6)}
    state = ReplStateTracker().update({"state": {"changed": changed, "kept": ["never_sent"], "skipped": "x"}})
    assert state is not None
    assert sum(len(t) for t in state.blobs.values()) <= MAX_SNAPSHOT_CHARS
    assert "MiB" in state.skipped["v5"] and "not received" in state.skipped["never_sent"]
    assert ReplStateTracker().update({"state": ["not", "a", "dict"]}) is None


def test_the_codec_decodes_without_executing() -> None:
    for value in [float("nan"), -0.0, 10**30, "", b"", (), frozenset(), {(): {1: [None]}}]:
        back = worker_state.decode(worker_state.encode(value))
        assert type(back) is type(value)
        assert back == value or (isinstance(value, float) and math.isnan(back))
    with pytest.raises(ValueError):
        worker_state.decode('{"m":"os"}')  # the host passes no importer: a module is a name, never imported
