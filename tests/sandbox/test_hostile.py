"""Hostile code: each case must be contained, leave the host unharmed, and leave the sandbox usable (or
transparently replaced). Cases that only bubblewrap can contain are marked `needs_bwrap`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dspy.primitives.code_interpreter import CodeExecutionError

from fleet_rlm.sandbox import launcher
from fleet_rlm.sandbox.interpreter import SandboxInterpreter
from tests.sandbox.conftest import MakeInterpreter, needs_bwrap


def usable(interp: SandboxInterpreter) -> None:
    assert interp.execute("print(6 * 7)") == "42"


def run(interp: SandboxInterpreter, code: str) -> str:
    """Output of a cell, or the error text when the cell raised."""
    try:
        return interp.execute(code) or ""
    except CodeExecutionError as exc:
        return f"ERROR: {exc}"


@pytest.fixture
def host_server() -> Iterator[int]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                conn.sendall(b"host-secret")
                conn.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    server.close()


# --- network --------------------------------------------------------------------------------------------------
@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_no_internet_egress(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    out = run(interp, "import socket\ns = socket.socket()\ns.settimeout(2)\ns.connect(('1.1.1.1', 80))\nprint('open')")
    assert ("open" not in out and "OSError" in out) or "unreachable" in out
    usable(interp)


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_host_loopback_unreachable(make_interpreter: MakeInterpreter, host_server: int) -> None:
    interp = make_interpreter()
    code = f"import socket\ns = socket.create_connection(('127.0.0.1', {host_server}), timeout=2)\nprint(s.recv(99))"
    out = run(interp, code)
    assert "host-secret" not in out and "ConnectionRefusedError" in out
    usable(interp)


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_dns_fails(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    out = run(interp, "import socket\nprint(socket.getaddrinfo('example.com', 443))")
    assert out.startswith("ERROR") and "gaierror" in out


# --- host files -----------------------------------------------------------------------------------------------
@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
@pytest.mark.parametrize("path", ["/etc/shadow", "/etc/passwd", "/home", "/var", "/work", "/root/.bashrc"])
def test_host_paths_invisible(make_interpreter: MakeInterpreter, path: str) -> None:
    interp = make_interpreter()
    out = run(interp, f"import os\nprint(os.path.exists({path!r}))")
    assert out == "False"


def test_no_site_hooks_run_but_installed_packages_import(make_interpreter: MakeInterpreter) -> None:
    """The worker starts without site.py (no .pth file of the interpreter runs in the sandbox), yet the
    interpreter's site-packages directories are on the guest's sys.path, in site.py's order, after the stdlib."""
    python = launcher.python_executable()
    probe = "import json, os, site, sys; print(json.dumps([p for p in site.getsitepackages() if os.path.isdir(p)]))"
    expected = json.loads(subprocess.run([python, "-I", "-S", "-c", probe], capture_output=True, text=True).stdout)
    interp = make_interpreter()
    flags = run(interp, "import sys\nprint(sys.flags.no_site, sys.flags.isolated)")
    assert flags == "1 1"
    path = json.loads(run(interp, "import json, sys\nprint(json.dumps(sys.path))"))
    assert [p for p in path if p in expected] == expected
    assert all(path.index(p) > path.index(next(q for q in path if q.endswith("lib-dynload"))) for p in expected)
    assert run(interp, "import json, email.parser\nprint('stdlib ok')") == "stdlib ok"


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_home_shows_only_the_python_install(make_interpreter: MakeInterpreter) -> None:
    home = Path.home()
    interp = make_interpreter()
    visible = run(interp, f"import os\nprint(os.listdir({str(home)!r}) if os.path.isdir({str(home)!r}) else [])")
    allowed = {p.name for p in Path(sys.base_prefix).resolve().parents} | {Path(sys.base_prefix).resolve().name}
    assert set(eval(visible)) <= allowed


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_data_dir_and_other_workspaces_invisible(make_interpreter: MakeInterpreter, tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "workspaces" / "other").mkdir(parents=True)
    (data / "fleet.db").write_text("database")
    (data / "workspaces" / "other" / "secret.txt").write_text("other-secret")
    interp = make_interpreter()
    code = (
        "import os\n"
        f"print(os.path.exists({str(data / 'fleet.db')!r}), os.path.exists({str(data)!r}))\n"
        "print(os.path.exists(WORKSPACE_ROOT + '/../other/secret.txt'), sorted(os.listdir('/')))"
    )
    out = run(interp, code).splitlines()
    assert out[0] == "False False" and out[1].startswith("False")
    assert "other" not in out[1] and "workspaces" not in out[1]


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_host_proc_invisible(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    out = run(
        interp,
        "import os\npids = [int(p) for p in os.listdir('/proc') if p.isdigit()]\n"
        f"print(max(pids) < 100, os.path.exists('/proc/{os.getpid()}/environ'))",
    )
    assert out == "True False"


@pytest.mark.parametrize("probe", ["os.environ.get('FAKE_API_KEY')", "'FAKE_API_KEY' in str(os.environ)"])
def test_env_secrets_never_visible(
    make_interpreter: MakeInterpreter, monkeypatch: pytest.MonkeyPatch, probe: str
) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "sk-fake-should-not-leak")
    interp = make_interpreter()
    assert interp.execute(f"import os\nprint({probe})") in ("None", "False")


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_init_environ_has_no_secrets(make_interpreter: MakeInterpreter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_API_KEY", "sk-fake-should-not-leak")
    interp = make_interpreter()
    out = run(
        interp,
        "import os\nfor p in os.listdir('/proc'):\n    if p.isdigit():\n        try:\n"
        "            print(open(f'/proc/{p}/environ','rb').read())\n        except OSError as e:\n            print(e)",
    )
    assert "sk-fake" not in out


# --- writes ---------------------------------------------------------------------------------------------------
@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
@pytest.mark.parametrize("target", ["/usr/evil", "/etc/evil", "/opt/fleet/worker.py", "/evil"])
def test_write_outside_workspace_fails(make_interpreter: MakeInterpreter, target: str) -> None:
    interp = make_interpreter()
    out = run(interp, f"open({target!r}, 'w').write('x')")
    assert out.startswith("ERROR") and ("Read-only" in out or "Permission" in out or "No such" in out)
    assert not os.path.exists(target) or target.endswith("worker.py")
    usable(interp)


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_tmp_is_private(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    marker = f"fleet-sandbox-marker-{os.getpid()}"
    interp.execute(f"open('/tmp/{marker}', 'w').write('x')")
    assert not os.path.exists(f"/tmp/{marker}")


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
@pytest.mark.parametrize("link", ["/", "..", "/proc/1/root"])
def test_symlink_escape_stays_in_sandbox(make_interpreter: MakeInterpreter, tmp_path: Path, link: str) -> None:
    (tmp_path / "data" / "workspaces" / "other").mkdir(parents=True)
    interp = make_interpreter()
    out = run(interp, f"import os\nos.symlink({link!r}, 'escape')\nprint(sorted(os.listdir('escape')))")
    assert ("other" not in out and "root" not in out.split("ERROR")[0]) or "workspace" in out
    assert run(interp, "print(os.path.exists('escape/etc/shadow'))") in ("False", "")


# --- resources ------------------------------------------------------------------------------------------------
@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_fork_bomb_is_contained(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(max_processes=24, cell_timeout_s=15)
    code = (
        "import os, time\nn = 0\ntry:\n    while n < 500:\n        if os.fork() == 0:\n"
        "            time.sleep(1)\n            os._exit(0)\n        n += 1\nexcept OSError as e:\n"
        "    print('blocked after', n, e.errno)"
    )
    out = run(interp, code)
    assert out.startswith("blocked after") and int(out.split()[2]) < 24
    uid = interp._session.ready_info["uid"] if interp._session else None
    interp.shutdown()
    assert uid is not None
    deadline = time.monotonic() + 5
    while _processes_of(uid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _processes_of(uid)


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_real_fork_bomb_replaced(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(max_processes=16, cell_timeout_s=3, interrupt_grace_s=1)
    interp.execute("kept = 1")
    out = run(interp, "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass")
    assert out.startswith("ERROR") and "interrupted" in out
    assert interp.execute("print(kept)") == "1"  # the bomb's processes were reaped; the worker kept its state


def _processes_of(uid: int) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(entry)
            except OSError:
                pass
    return found


@pytest.mark.parametrize("code", ["x = bytearray(3 * 1024**3)", "x = []\nwhile True:\n    x.append(b'y' * 10**7)"])
def test_memory_bomb_raises_memory_error(make_interpreter: MakeInterpreter, code: str) -> None:
    interp = make_interpreter(memory_mb=512)
    out = run(interp, code)
    assert out.startswith("ERROR") and "MemoryError" in out
    run(interp, "x = None")
    usable(interp)


def test_tight_loop_interrupted_state_kept(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(cell_timeout_s=1)
    interp.execute("state = 'kept'")
    assert "interrupted" in run(interp, "while True:\n    pass")
    assert interp.execute("print(state)") == "kept"


def test_swallowed_interrupt_kills_and_resets(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(cell_timeout_s=1, interrupt_grace_s=1)
    code = "import time\nwhile True:\n    try:\n        time.sleep(0.05)\n    except KeyboardInterrupt:\n        pass"
    out = run(interp, code)
    assert "[sandbox reset]" in out and "killed" in out
    usable(interp)


def test_cpu_limit_resets(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(cpu_seconds=1, cell_timeout_s=15)
    out = run(interp, "while True:\n    pass")
    assert "[sandbox reset]" in out and ("SIGXCPU" in out or "SIGKILL" in out)
    usable(interp)


def test_giant_output_capped(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(output_max_chars=2000)
    out = run(interp, "import sys\nfor _ in range(50):\n    sys.stdout.write('z' * 1_000_000)")
    assert len(out) < 2500 and "omitted" in out
    usable(interp)


@pytest.mark.parametrize("code", ["import os\nos._exit(0)", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"])
def test_worker_suicide_replaced(make_interpreter: MakeInterpreter, code: str) -> None:
    interp = make_interpreter()
    assert "[sandbox reset]" in run(interp, code)
    usable(interp)


def test_writing_garbage_to_protocol_fds(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    code = (
        "import os\nfor fd in range(3, 400):\n    try:\n        os.write(fd, b'\\xff' * 64)\n"
        "    except OSError:\n        pass"
    )
    out = run(interp, code)
    assert out == "" or "[sandbox reset]" in out
    usable(interp)


def test_printed_fake_frames_are_just_output(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    code = (
        "import json, struct, sys\n"
        "h = json.dumps({'t': 'done', 'id': 1, 'kind': 'final', 'value': 'forged'}).encode()\n"
        "sys.stdout.buffer.write(struct.pack('>II', len(h), 0) + h)\nsys.stdout.flush()\nprint()\nprint('real')"
    )
    out = interp.execute(code)
    assert isinstance(out, str) and out.endswith("real") and "forged" in out
    usable(interp)


def test_file_size_limit(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(max_file_mb=2)
    out = run(interp, "with open(BUFFERS_DIR + '/big.bin', 'wb') as f:\n    f.write(b'0' * (5 * 1024 * 1024))")
    assert out.startswith("ERROR") and "File too large" in out
    run(interp, "import os\nos.remove(BUFFERS_DIR + '/big.bin')")
    usable(interp)


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_tmp_is_size_limited(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter(tmp_mb=4)
    out = run(
        interp, "with open('/tmp/fill', 'wb') as f:\n    for _ in range(10):\n        f.write(b'0' * 1024 * 1024)"
    )
    assert out.startswith("ERROR") and "No space left" in out
    usable(interp)


def test_sys_exit_and_closed_stdio(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    assert "SystemExit" in run(interp, "import sys\nsys.exit(5)")
    run(interp, "import os\nos.close(1)\nos.close(2)")
    usable(interp)


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_privileges_cannot_be_regained(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    out = run(
        interp,
        "import os, resource\ntry:\n    os.setuid(0)\nexcept OSError as e:\n    print('setuid', e.errno)\n"
        "try:\n    resource.setrlimit(resource.RLIMIT_AS, (-1, -1))\n"
        "except (ValueError, OSError) as e:\n    print('rlimit blocked')",
    )
    assert "setuid 1" in out and "rlimit blocked" in out


@needs_bwrap
@pytest.mark.parametrize("backend", ["bubblewrap"], indirect=True)
def test_cannot_kill_host(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    run(
        interp,
        f"import os, signal\nfor pid in (os.getppid(), 1, {os.getpid()}):\n    try:\n"
        "        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass",
    )
    usable(interp)


def test_background_thread_does_not_break_worker(make_interpreter: MakeInterpreter) -> None:
    interp = make_interpreter()
    interp.execute(
        "import threading, time\n"
        "threading.Thread(target=lambda: [print('bg') or time.sleep(0.01) for _ in range(50)], daemon=True).start()"
    )
    usable(interp)
