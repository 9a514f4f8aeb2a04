"""The REPL cells the demo fake LM writes for an RLM run, root and child.

Each cell is real Python that runs in the sandbox and reads the run's own `context`, so what the demo shows (the
sizes, the first lines, the chunk summaries) is about the user's documents, not canned text. The root explores
the context, asks the sub-LM about each chunk in one batch, hands a sub-question to a child RLM, then submits a
summary built from its variables; a child reads its context, asks the sub-LM once and submits.

Pure strings: no dspy import, nothing runs here.
"""

from __future__ import annotations

CHILD_PREFIX = "Sub-question:"
"""How a demo child's task starts (the rule tells a child's step from the root's by it)."""

SUB_QUESTION = f"{CHILD_PREFIX} which line of the context stands out most, and why?"
DEMO_NOTE = "(Demo mode: fleet-rlm's fake model wrote this code; no real model was called.)"

ROOT_EXPLORE = """\
text = context if context.strip() else task
lines = [line for line in text.splitlines() if line.strip() and not line.startswith("=== ")]  # not the file headers
print(f"context: {len(context):,} characters, {len(lines)} line" + "s" * (len(lines) != 1) + " of content")
if not context.strip():
    print("(nothing attached: reading the task instead)")
for line in lines[:5]:
    print("  |", line[:100])
"""

ROOT_BATCH = """\
size = max(1, -(-len(lines) // 3))
chunks = ["\\n".join(lines[i:i + size]) for i in range(0, len(lines), size)][:3]
summaries = llm_query_batched([f"Summarize this part in one sentence:\\n{chunk}" for chunk in chunks])
for number, summary in enumerate(summaries, 1):
    print(f"chunk {number}: {summary}")
"""

ROOT_CHILD = f"""\
detail = rlm_query({SUB_QUESTION!r}, context="\\n".join(lines))
print("child says:", detail)
"""

ROOT_SUBMIT = f"""\
answer = (
    f"On “{{task}}”: I read {{len(context):,}} characters of context"
    f" ({{len(lines)}} line" + "s" * (len(lines) != 1) + " of content)"
    f" in {{len(chunks)}} chunk" + "s" * (len(chunks) != 1) + ".\\n\\n"
    + "\\n".join(f"- Chunk {{n}}: {{s}}" for n, s in enumerate(summaries, 1))
    + f"\\n\\nA child agent looked closer: {{detail}}\\n\\n{DEMO_NOTE}"
)
SUBMIT(answer=answer)
"""

ROOT_SUBMIT_EARLY = f"""\
SUBMIT(answer=f"Read {{len(context):,}} characters of context before the iteration limit. {DEMO_NOTE}")
"""

CHILD_READ = """\
print(f"child context: {len(context):,} characters")
note = llm_query(f"Which line stands out most, and why? One sentence.\\n{context[:4000] or task}")
print(note)
"""

CHILD_SUBMIT = """\
SUBMIT(answer=note)
"""

CHILD_SUBMIT_EARLY = f"""\
SUBMIT(answer="No time left to look closer. {DEMO_NOTE}")
"""


def root_cell(iteration: int, max_iters: int) -> tuple[str, str]:
    """(reasoning, code) of the root's step `iteration` (1-based) of at most `max_iters`."""
    if (iteration >= max_iters and iteration < 4) or iteration > 4:
        return "Submit what I have (the last iteration allowed, or a cell failed).", ROOT_SUBMIT_EARLY
    steps = {
        1: ("Explore first: how big is the context, and what do its first lines look like?", ROOT_EXPLORE),
        2: ("Split the lines into chunks and ask the sub-LM about each, in one batch.", ROOT_BATCH),
        3: ("Hand one sub-question to a child agent with its own REPL.", ROOT_CHILD),
    }
    return steps.get(iteration, ("I have the sizes, the chunk summaries and the child's answer: submit.", ROOT_SUBMIT))


def child_cell(iteration: int, max_iters: int) -> tuple[str, str]:
    """(reasoning, code) of a child's step: read and ask once, then submit."""
    if iteration == 1 and max_iters > 1:
        return "Look at my context and ask the sub-LM which line stands out.", CHILD_READ
    if iteration == 1 or iteration > 2:
        return "Submit what I have (no room for a second step, or a cell failed).", CHILD_SUBMIT_EARLY
    return "The sub-LM answered: submit its note.", CHILD_SUBMIT
