"""Run the fake LM out of process: ``python -m fleet_rlm.testing.fake_lm --port N --script FILE``.

``--demo`` is the "try it without an API key" path: every DSPy program gets an answer that shows what it
does, built from the request (``fake_lm_demo``: an RLM run explores the context over a few iterations, batches
sub-LM calls, asks a child, submits from its variables; a ReAct run calls a tool and finishes), and the
settings that point fleet-rlm at it are printed to stderr.

For end-to-end tests that start other processes (e.g. a browser test against ``fleet web``) and need an
LM endpoint that outlives no test. Prints one ready line to stdout, flushed::

    fake-lm ready base_url=http://127.0.0.1:PORT/v1 port=PORT model=openai/fake-model

The script file is JSON: a list of responses, or ``{"responses": [...], "rules": [...], "default": ...,
"latency_s": 0, "model": "openai/fake-model"}``. More responses can be pushed at run time with
``POST /_fake/responses``; the log is at ``GET /_fake/requests``. Stops on SIGINT/SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence

from fleet_rlm.testing.fake_lm_http import FakeLMHttpServer
from fleet_rlm.testing.fake_lm_script import DEFAULT_TEXT, FakeLMScript, load_script_file
from fleet_rlm.testing.fake_lm_server import DEFAULT_MODEL, FakeLM, FakeLMServer
from fleet_rlm.testing.fake_lm_types import FakeLMScriptError

__all__ = ["FakeLM", "FakeLMServer", "main", "serve"]


async def serve(
    script: FakeLMScript, *, host: str, port: int, model: str, ready_file: str | None, demo: bool = False
) -> None:
    """Serve until SIGINT/SIGTERM in the current event loop."""
    wire_model = model.split("/", 1)[1] if "/" in model else model
    http = FakeLMHttpServer(script, model=wire_model)
    bound = await http.start(host, port)
    base_url = f"http://{host}:{bound}/v1"
    line = f"fake-lm ready base_url={base_url} port={bound} model={model}"
    if ready_file:
        with open(ready_file, "w", encoding="utf-8") as handle:
            handle.write(line + "\n")
    print(line, flush=True)
    if demo:
        print(demo_hint(base_url, model), file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await http.close()


def demo_hint(base_url: str, model: str) -> str:
    """What to run in another terminal to use this fake LM as the workbench's model."""
    return (
        "fake LM running. In another terminal:\n"
        f"  export DSPY_LM_MODEL={model} DSPY_LM_API_BASE={base_url} DSPY_LLM_API_KEY=fake\n"
        '  uv run fleet web        # or: uv run fleet   /   uv run fleet-rlm run "hello"\n'
        "Ctrl-C stops it."
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fleet_rlm.testing.fake_lm", description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1", help="bind address (loopback by default)")
    parser.add_argument("--port", type=int, default=0, help="port; 0 picks a free one (read the ready line)")
    parser.add_argument("--script", help="JSON script file (responses, rules, default, latency_s, model)")
    parser.add_argument("--default", help="text answered when the queue is empty")
    parser.add_argument("--latency", type=float, help="seconds to wait before every answer")
    parser.add_argument("--model", help=f"model name to advertise (default {DEFAULT_MODEL})")
    parser.add_argument("--ready-file", help="also write the ready line to this file")
    parser.add_argument(
        "--auto",
        metavar="ANSWER",
        help="answer every DSPy program by its requested output fields (RLM steps submit ANSWER); "
        "sub-LM prompts get the default text",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="try fleet-rlm without an API key: answers that show what each program does (RLM iterations, "
        "sub-LM batches, a child, a tool call) and the settings to use",
    )
    args = parser.parse_args(argv)
    try:
        if args.script:
            script, spec = load_script_file(args.script)
        else:
            script, spec = FakeLMScript(default=DEFAULT_TEXT), {}
    except FakeLMScriptError as exc:
        print(f"error[{exc.code}]: {exc.message} {exc.action}", file=sys.stderr)
        return 2
    if args.default is not None:
        script.default = args.default
    if args.latency is not None:
        script.latency_s = args.latency
    if args.demo:
        from fleet_rlm.testing.fake_lm_demo import demo_rule

        script.add_rule(demo_rule())
    if args.auto is not None:
        from fleet_rlm.testing.fake_lm_auto import adapter_fields_rule

        script.add_rule(adapter_fields_rule(answer=args.auto))
    model = args.model or spec.get("model") or DEFAULT_MODEL
    try:
        asyncio.run(
            serve(script, host=args.host, port=args.port, model=model, ready_file=args.ready_file, demo=args.demo)
        )
    except OSError as exc:
        print(
            f"error[fake_lm.bind_failed]: cannot listen on {args.host}:{args.port}: {exc}. "
            "Pick a free port or use --port 0.",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
