"""Scenario 7, the CLI as a user feels it: each command a fresh process, wall time to exit, zero-latency fake LM.

Rows: `fleet-rlm run "What is 2+2?" --mode direct`, `fleet-rlm sessions list`, and `fleet` (start, one question,
`/exit`), each the median of several runs against the warm local server the first call started (that cold first
call is a row of its own); and the time from starting `fleet-rlm run` to its first progress line on stderr. The
baseline, measured in the same run, is a bare script that imports dspy and makes one LM call to the same fake LM.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from fleet_rlm.bench.perf.context import SuiteContext
from fleet_rlm.bench.perf.measure import median
from fleet_rlm.bench.perf.report import Row
from fleet_rlm.bench.perf.server import FAKE_MODEL, fake_lm_process

S = "7 cli"
BARE = "bare `import dspy` + one LM call"
QUESTION = "What is 2+2?"
RUN_METRIC = f'`fleet-rlm run "{QUESTION}" --mode direct`'
BARE_SCRIPT = (
    "import sys, dspy\n"
    f"lm = dspy.LM({FAKE_MODEL!r}, api_base=sys.argv[1], api_key='fake', cache=False, num_retries=0)\n"
    f"print(lm({QUESTION!r})[0])\n"
)


def _bin(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def _env(data_dir: Path, lm_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLEET_", "DSPY_", "DAYTONA_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: imports from cached bytecode, like a user's
    env.update(
        FLEET_DATA_DIR=str(data_dir),
        DSPY_LM_MODEL=FAKE_MODEL,
        DSPY_LM_API_BASE=lm_url,
        DSPY_LLM_API_KEY="fake",
        FLEET_SANDBOX_POOL_SIZE="0",
        FLEET_LOCAL_SERVER_IDLE_S="120",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_COLOR="1",
    )
    return env


def _wall(command: list[str], env: dict[str, str], stdin: str = "") -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, input=stdin, capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} {command[1:3]} exited {done.returncode}: {done.stderr.strip()[-300:]}")
    return wall


def _first_stderr_line(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    try:
        ready, _, _ = select.select([child.stderr], [], [], 120)
        first = time.perf_counter() - started if ready and child.stderr.read(1) else float("nan")
        child.communicate(timeout=300)
    finally:
        if child.poll() is None:
            child.kill()
    return first


def _stop_server(env: dict[str, str]) -> None:
    subprocess.run([_bin("fleet-rlm"), "local-server", "stop"], env=env, capture_output=True, timeout=60)


def run(ctx: SuiteContext) -> list[Row]:
    repeats = 1 if ctx.quick else 7
    lm = ctx.shared("cli_lm", lambda: fake_lm_process(0.0))
    env = _env(ctx.work_dir / "cli-data", lm.base_url)
    bare = [sys.executable, "-c", BARE_SCRIPT, lm.base_url]
    run_cmd = [_bin("fleet-rlm"), "run", QUESTION, "--mode", "direct"]
    listing = [_bin("fleet-rlm"), "sessions", "list"]
    chat = [_bin("fleet")]
    chat_input = f"{QUESTION}\n/exit\n"
    _wall(bare, env)  # warm the OS file cache for the baseline as the CLI's first call does for it
    try:
        cold = _wall(run_cmd, env)  # starts the local server
        samples: dict[str, list[float]] = {"bare": [], "run": [], "list": [], "chat": [], "first": []}
        for _ in range(repeats):  # interleaved, so load drifts hit every figure alike
            samples["bare"].append(_wall(bare, env))
            samples["run"].append(_wall(run_cmd, env))
            samples["list"].append(_wall(listing, env))
            samples["chat"].append(_wall(chat, env, chat_input))
            samples["first"].append(_first_stderr_line(run_cmd, env))
    finally:
        _stop_server(env)
    base = median(samples["bare"])
    note = f"median of {repeats} fresh processes; warm local server"
    return [
        Row(S, RUN_METRIC, "s", median(samples["run"]), {BARE: base}, 1.5, True, note),
        Row(S, "`fleet-rlm sessions list`", "s", median(samples["list"]), {BARE: base}, 0.5, True, note),
        Row(S, "`fleet` chat: start, one question, /exit", "s", median(samples["chat"]), {BARE: base}, 1.5, True, note),
        Row(S, "`fleet-rlm run`: first progress line", "s", median(samples["first"]), {}, 0.5, False, note),
        Row(
            S,
            "`fleet-rlm run`, first call (starts the local server)",
            "s",
            cold,
            {BARE: base},
            note="once per data dir until the server idles out (FLEET_LOCAL_SERVER_IDLE_S)",
        ),
    ]
