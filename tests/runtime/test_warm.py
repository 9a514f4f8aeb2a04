"""The heap settles once in a process that owns its collector (turn workers, servers), never elsewhere."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import gc
from fleet_rlm.runtime import warm
before = (gc.get_freeze_count(), gc.get_threshold())
warm.settle_heap()                      # not owned: nothing happens
assert (gc.get_freeze_count(), gc.get_threshold()) == before, before
warm.own_heap()
warm.settle_heap()
frozen, threshold = gc.get_freeze_count(), gc.get_threshold()
assert frozen > 0 and threshold[2] == warm.FULL_COLLECTION_EVERY, (frozen, threshold)
assert threshold[:2] == before[1][:2]   # young collections as often as before
objects = [[] for _ in range(1000)]
warm.settle_heap()                      # once: later calls freeze nothing more
assert gc.get_freeze_count() == frozen
print("ok")
"""


def test_only_an_owned_process_settles_its_heap_and_only_once() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_a_server_entry_point_owns_its_heap_after_the_start() -> None:
    script = (
        "from fleet_rlm.api import startup_gc\nfrom fleet_rlm.runtime import warm\n"
        "startup_gc.pause()\nassert not warm._owned\nstartup_gc.resume()\nassert warm._owned\nprint('ok')"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
