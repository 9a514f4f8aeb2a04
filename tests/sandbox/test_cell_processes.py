"""No guest process survives its cell (every backend): a plain child, a double-forked daemon and a `setsid`
child are gone when the cell returns - checked from the host's /proc and from the next cell - while a guest
thread keeps running across cells."""

from __future__ import annotations

import os
import uuid

from tests.sandbox.conftest import MakeInterpreter

SPAWN = """
import os, subprocess, time
marker = {marker!r}
subprocess.Popen(["sleep", marker])
subprocess.Popen(["sleep", marker], start_new_session=True)
pid = os.fork()
if pid == 0:  # a daemon: fork, setsid, fork again, the middle one exits
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", marker])
    os._exit(0)
os.waitpid(pid, 0)

def running():
    count = 0
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{{entry}}/cmdline", "rb") as handle:
                count += marker.encode() in handle.read()
        except OSError:
            pass
    return count

for _ in range(500):
    if running() == 3:
        break
    time.sleep(0.01)
print(running())
"""


def _host_processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    found.append(int(entry))
        except OSError:
            pass
    return found


def test_processes_started_by_a_cell_end_with_it(make_interpreter: MakeInterpreter) -> None:
    marker = f"86400.{uuid.uuid4().int % 10**9}"  # a valid `sleep` argument nobody else uses
    interp = make_interpreter()
    assert interp.execute(SPAWN.format(marker=marker)) == "3"  # all three were running inside the cell
    assert _host_processes_with(marker) == []
    assert interp.execute("print(running())") == "0"


def test_a_guest_thread_keeps_running_across_cells(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    interp.execute(
        "import threading, time\nticks = [0]\nstop = threading.Event()\n"
        "def tick():\n    while not stop.wait(0.005):\n        ticks[0] += 1\n"
        "worker = threading.Thread(target=tick, daemon=True)\nworker.start()"
    )
    seen = interp.execute("print(ticks[0])")
    later = interp.execute(
        f"deadline = time.monotonic() + 10\nwhile ticks[0] <= {seen} and time.monotonic() < deadline:\n"
        "    time.sleep(0.01)\nprint(worker.is_alive(), ticks[0] > " + str(seen) + ")"
    )
    assert later == "True True"
    interp.execute("stop.set()")
