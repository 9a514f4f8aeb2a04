"""One realistic instance of every event kind, shared by the event tests (a new kind must be added here)."""

from __future__ import annotations

from typing import Any

from fleet_rlm.events import RoleUsage, UsageTotals

ENVELOPE: dict[str, Any] = {"run_id": "run-1", "session_id": "sess-1", "depth": 1, "actor": "child:c1"}

USAGE = UsageTotals(
    tokens_in=120,
    tokens_out=30,
    cost_usd=0.0012,
    cost_known=True,
    lm_calls=3,
    iterations=2,
    by_role={
        "root": RoleUsage(tokens_in=100, tokens_out=20, lm_calls=2),
        "sub": RoleUsage(tokens_in=20, lm_calls=1),
    },
)

PAYLOADS: dict[str, dict[str, Any]] = {
    "turn_queued": {"queue": "turns"},
    "turn_started": {"turn_id": "t1", "requested_mode": "auto", "input_preview": "Summarise the repo"},
    "turn_finished": {"mode": "rlm", "duration_ms": 1234},
    "turn_failed": {"code": "model_not_configured", "message": "no model", "action": "set DSPY_LM_MODEL"},
    "turn_cancelled": {"reason": "cancelled by user", "requested_by": "user-1", "duration_ms": 5},
    "turn_interrupted": {"reason": "server shutdown"},
    "status": {"message": "starting sandbox", "phase": "sandbox"},
    "route_decision": {"mode": "rlm", "reason": "context above threshold", "context_chars": 250_000},
    "context_loaded": {
        "source": "file",
        "name": "notes.txt",
        "chars": 10,
        "bytes": 12,
        "variable": "context",
    },
    "reasoning": {"text": "Look at the headers first.", "iteration": 1},
    "code": {"code": "print(len(context))", "iteration": 1},
    "output": {"stream": "stdout", "text": "250000\n", "omitted_chars": 0, "iteration": 1},
    "session_forked": {"origin_session_id": "s-origin", "after_turn": 1, "origin_turns": 3},
    "repl_variables": {
        "variables": [
            {"name": "x", "type": "list", "size": 3, "preview": "[1, 2, 3]", "input": False},
            {"name": "context", "type": "str", "size": 250000, "preview": "'chapter one…'", "input": True},
        ],
        "omitted": 0,
        "iteration": 1,
    },
    "repl_restored": {
        "source": "fork",
        "source_run_id": "r0",
        "source_iteration": 2,
        "restored": ["x", "rows"],
        "not_restored": {"sock": "type socket is not plain data"},
    },
    "tool_call": {"call_id": "tc1", "name": "search", "args": {"q": "dspy", "limit": 3}},
    "tool_result": {"call_id": "tc1", "name": "search", "ok": False, "error": "timeout", "latency_ms": 10},
    "sub_lm_start": {
        "call_id": "l1",
        "model": "openai/gpt-4o-mini",
        "prompt_preview": "Classify...",
        "batch_id": "b1",
        "batch_index": 0,
        "batch_size": 4,
    },
    "sub_lm_end": {"call_id": "l1", "ok": True, "latency_ms": 40, "response_preview": "A", "tokens_in": 9},
    "lm_call": {
        "call_id": "m1",
        "role": "root",
        "model": "openai/gpt-4o-mini",
        "ok": True,
        "latency_ms": 310,
        "tokens_in": 900,
        "tokens_out": 120,
        "iteration": 2,
    },
    "child_start": {"child_id": "c1", "task_preview": "Read chapter 2", "child_depth": 1},
    "child_progress": {"child_id": "c1", "iteration": 2, "note": "found 3 candidates"},
    "child_end": {"child_id": "c1", "ok": True, "answer_preview": "42", "usage": USAGE.model_dump()},
    "warning": {"code": "isolation_reduced", "message": "bubblewrap unavailable"},
    "budget_exhausted": {"budget": "max_llm_calls", "limit": 200, "used": 200},
    "artifact_created": {
        "artifact_id": "a1",
        "name": "report.md",
        "path": "artifacts/report.md",
        "size_bytes": 42,
        "sha256": "0" * 64,
        "media_type": "text/markdown",
    },
    "memory_updated": {"path": "memory/notes.md", "chars_appended": 80},
    "usage": USAGE.model_dump(),
    "final": {"answer": "42", "fields": {"answer": "42", "confidence": 0.9, "sources": ["a", "b"]}},
    "summary": {"text": "Counted the lines."},
    "error": {"code": "sandbox_failed", "message": "worker died", "action": "retry", "fatal": True},
    "sandbox_reset": {"reason": "worker crashed", "sandbox_id": "sb-2"},
}
