"""The scripted model every scenario runs against: stateless rules for the fake LM, chosen by the task text.

A task names its plan as `perf-plan=<name>`. The rule counts the steps already in the RLM's REPL history (each
step's code carries a `# perf-step` marker), so any number of concurrent sessions share one fake LM without
shared state. Plans:

- `steps<N>`: N-1 printing steps, then SUBMIT (an N-iteration turn).
- `batch<N>`: one `llm_query_batched` of N prompts, then SUBMIT.
- `children<N>`: one `rlm_query_batched` of N child tasks (each child submits at once), then SUBMIT.
- `context<N>`: N steps touching `context` (its length), then SUBMIT.

Sub-LM prompts get "ok"; other adapter requests (router, extract) get field-typed defaults.
"""

from __future__ import annotations

import re
from typing import Any

from fleet_rlm.testing import FakeLMServer, adapter_fields_rule, is_adapter_request, rlm_step

MARK = "# perf-step"
CHILD_MARK = "PERFCHILD"
ANSWER = "perf-done"
_PLAN = re.compile(r"perf-plan=([a-z]+)(\d+)")


def task_for(plan: str, extra: str = "") -> str:
    return f"Benchmark turn perf-plan={plan}. {extra}".strip()


def _is_action(request: Any) -> bool:
    system = request.system_text
    return "`code`" in system and "`reasoning`" in system


def _submit() -> str:
    return rlm_step("Done.", f"SUBMIT(answer={ANSWER!r})  {MARK}")


def _action(kind: str, count: int, done: int) -> str:
    if kind == "steps":
        if done >= count - 1:
            return _submit()
        return rlm_step(f"Step {done + 1}.", f"x_{done} = {done} * 2\nprint('step', x_{done})  {MARK}")
    if done >= {"context": count}.get(kind, 1):
        return _submit()
    if kind == "batch":
        code = f"r = llm_query_batched(['prompt %d' % i for i in range({count})])\nprint(len(r))  {MARK}"
    elif kind == "children":
        code = f"r = rlm_query_batched(['{CHILD_MARK[:4]}' + '{CHILD_MARK[4:]} %d' % i for i in range({count})])"
        code += f"\nprint(len(r))  {MARK}"
    else:
        code = f"n = len(context)\nprint(n)  {MARK}"
    return rlm_step(f"Step {done + 1}.", code)


def perf_rule() -> Any:
    fields = adapter_fields_rule(answer=ANSWER)

    def rule(request: Any) -> Any:
        if not is_adapter_request(request):
            return "ok"
        text = request.text
        if _is_action(request):
            if CHILD_MARK in text:
                return _submit()
            plan = _PLAN.search(text)
            kind, count = (plan.group(1), int(plan.group(2))) if plan else ("steps", 1)
            return _action(kind, count, text.count(MARK))
        return fields(request)

    return rule


def perf_lm_server(latency_s: float = 0.0) -> FakeLMServer:
    """An in-process fake LM answering every plan (start it with `with` or `.start()`)."""
    return FakeLMServer(rule=perf_rule(), latency_s=latency_s, max_recorded=200)


def main() -> None:
    """`python -m fleet_rlm.bench.perf.script LATENCY_S`: serve in its own process and print the base URL.

    Each stdin line `latency SECONDS` changes the latency; end of stdin stops the server.
    """
    import sys

    server = perf_lm_server(float(sys.argv[1]) if len(sys.argv) > 1 else 0.0).start()
    print(server.base_url, flush=True)
    for line in sys.stdin:
        command, _, value = line.strip().partition(" ")
        if command == "latency":
            server.latency_s = float(value)
            print("ok", flush=True)
    server.stop()


if __name__ == "__main__":
    main()
