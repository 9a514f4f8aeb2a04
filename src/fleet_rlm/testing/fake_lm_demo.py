"""The demo fake LM (``python -m fleet_rlm.testing.fake_lm --demo``): answers that show what each program does.

Stateless, like every rule: each answer is chosen from the request alone (its output fields, its input fields,
the RLM iteration number, the ReAct trajectory so far), so any number of sessions can use it at once.

- router: rlm when something is attached, tools when the task names a file, memory, the workspace or a URL,
  rlm when it asks for analysis, else direct; with a one-sentence reason.
- direct: an answer that quotes the task and describes the context and history it was given.
- tools (ReAct): one tool that reads something (the first attachment, else the workspace), then finish, then
  an answer that says what the tool returned.
- RLM root: explore the context, a sub-LM batch over chunks, a child RLM on a sub-question, SUBMIT a summary
  built from the variables (`fake_lm_demo_cells`); a child: read, one sub-LM call, SUBMIT.
- sub-LM prompts: a sentence computed from the prompt (its lines, its longest line).

Anything else (GEPA's reflection, a signature this module does not know) gets the ``--auto`` answer.
"""

from __future__ import annotations

import re
from typing import Any, cast

from fleet_rlm.testing.fake_lm_auto import adapter_fields_rule, requested_output_fields
from fleet_rlm.testing.fake_lm_demo_cells import CHILD_PREFIX, child_cell, root_cell
from fleet_rlm.testing.fake_lm_dspy import dspy_fields, python_block
from fleet_rlm.testing.fake_lm_rules import is_adapter_request
from fleet_rlm.testing.fake_lm_types import RecordedRequest, ResponseLike, Rule

DEMO_ANSWER = "This is the fake model's answer (fleet-rlm demo mode: no real model was called)."
DEMO_NOTE = "(Demo mode: fleet-rlm's fake model wrote this; no real model was called.)"

_INPUT = re.compile(r"\[\[ ## (\w+) ## \]\]\n?")
_RESPOND = re.compile(r"\n*Respond with the corresponding output fields.*\Z", re.S)
_ITERATION = re.compile(r"(\d+)\s*/\s*(\d+)")
_TASK_PREVIEW = re.compile(r"Variable: `task`.*?```\n(.*?)```", re.S)
_DOCUMENTS = re.compile(r"^(\d+) documents?, ([\d,]+) chars in total")
_FIRST_DOCUMENT = re.compile(r"in total: (.+?) \((\w+), [\d,]+ chars\)")
_TOOLS_WORDS = re.compile(r"\b(memory|memories|workspace|files?|folders?|urls?|https?://\S+|web ?page|look up)\b", re.I)
_RLM_WORDS = re.compile(r"\b(analy[sz]e|analysis|compute|calculate|count|explore|step by step|each|every)\b", re.I)


def input_fields(request: RecordedRequest) -> dict[str, str]:
    """The input fields of an adapter request, read from its last user message (`[[ ## name ## ]]` sections)."""
    parts = _INPUT.split(_RESPOND.sub("", request.last_user_text))
    return {name: value.strip() for name, value in zip(parts[1::2], parts[2::2], strict=False)}


def quote(text: str, limit: int = 80) -> str:
    """The first line of `text`, shortened, in curly quotes."""
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return f"“{line[:limit]}{'…' if len(line) > limit else ''}”"


def route(inputs: dict[str, str]) -> str:
    task, context = inputs.get("task", ""), inputs.get("context", "")
    documents = _DOCUMENTS.match(context)
    if documents:
        count, chars = int(documents.group(1)), documents.group(2)
        what = "1 attached document" if count == 1 else f"{count} attached documents"
        mode, reason = "rlm", f"The task comes with {what} ({chars} chars); rlm reads them with code in a REPL."
    elif _TOOLS_WORDS.search(task):
        mode, reason = "tools", "The task names files, memory or a URL; a few tool calls can read them."
    elif _RLM_WORDS.search(task):
        mode, reason = "rlm", "The task asks for analysis in several steps; rlm works through it in a REPL."
    else:
        mode, reason = "direct", "A short question with nothing attached: answered directly."
    return dspy_fields(mode=mode, reason=reason)


def direct_answer(inputs: dict[str, str]) -> str:
    task, context, history = inputs.get("task", ""), inputs.get("context", ""), inputs.get("history", "")
    lines = [line for line in context.splitlines() if line.strip()]
    seen = "No context was attached."
    if context:
        seen = f"The context holds {len(context):,} characters in {len(lines)} lines; it starts with {quote(context)}."
    earlier = f" The conversation so far ({len(history):,} characters) came along." if history else ""
    answer = f"You asked {quote(task, 120)}. {seen}{earlier}\n\n{DEMO_NOTE}"
    return dspy_fields(reasoning="Read the task, the context and the history, then answer.", answer=answer)


def react_step(inputs: dict[str, str]) -> str:
    if "tool_name_0" in inputs:  # the trajectory's own sections (thought_0, tool_name_0, observation_0, ...)
        return dspy_fields(
            next_thought="The tool's answer is enough to reply.", next_tool_name="finish", next_tool_args={}
        )
    document = _FIRST_DOCUMENT.search(inputs.get("attachments", ""))
    if document:
        name = document.group(1).split(", ")[0]
        return dspy_fields(
            next_thought=f"Read the start of {name} first.",
            next_tool_name="read_attachment",
            next_tool_args={"name": name, "max_chars": 2000},
        )
    return dspy_fields(
        next_thought="Nothing is attached: look at what the workspace holds.",
        next_tool_name="list_workspace",
        next_tool_args={"path": "."},
    )


def react_answer(inputs: dict[str, str]) -> str:
    tool, seen = inputs.get("tool_name_0"), inputs.get("observation_0", "")
    if tool:
        found = f"I called `{tool}`: it returned {len(seen):,} characters, starting with {quote(seen)}."
    else:
        found = "I answered without calling a tool."
    return dspy_fields(reasoning="One tool call told me what I needed.", answer=f"{found}\n\n{DEMO_NOTE}")


def rlm_step(inputs: dict[str, str]) -> str:
    numbers = _ITERATION.search(inputs.get("iteration", ""))
    iteration, max_iters = (int(numbers.group(1)), int(numbers.group(2))) if numbers else (1, 1)
    task = _TASK_PREVIEW.search(inputs.get("variables_info", ""))
    is_child = bool(task) and task.group(1).strip().startswith(CHILD_PREFIX)  # type: ignore[union-attr]
    reasoning, code = (child_cell if is_child else root_cell)(iteration, max_iters)
    return dspy_fields(reasoning=reasoning, code=python_block(code))


def lines_of(count: int) -> str:
    return f"{count} line" if count == 1 else f"{count} lines"


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def sub_lm_answer(prompt: str) -> str:
    """A sentence computed from a raw prompt (`llm_query`): its lines, the one with the largest number (or the
    longest one)."""
    head, _, body = prompt.partition("\n")
    lines = [line.strip() for line in (body or head).splitlines() if line.strip() and not line.startswith("=== ")]
    if not lines:
        return "There is nothing to read in this part."
    if head.lower().startswith("summarize"):
        return f"{lines_of(len(lines))}, starting with {quote(lines[0], 60)}."
    numbered = [(max(float(n) for n in _NUMBER.findall(line)), line) for line in lines if _NUMBER.search(line)]
    if numbered:
        value, line = max(numbered, key=lambda pair: pair[0])
        return f"{quote(line, 80)} stands out: it holds the largest number ({value:g}) of {lines_of(len(lines))}."
    return f"{quote(max(lines, key=len), 80)} stands out: it is the longest of {lines_of(len(lines))}."


def demo_rule() -> Rule:
    """The `--demo` rule: every program of fleet-rlm gets an answer built from its request."""
    fallback = adapter_fields_rule(answer=DEMO_ANSWER)

    def rule(request: RecordedRequest) -> ResponseLike | None:
        if not is_adapter_request(request):
            return sub_lm_answer(request.last_user_text)
        fields = requested_output_fields(request)
        inputs = input_fields(request)
        answer: Any = None
        if fields == ["mode", "reason"]:
            answer = route(inputs)
        elif fields == ["reasoning", "code"]:
            answer = rlm_step(inputs)
        elif fields[:2] == ["next_thought", "next_tool_name"]:
            answer = react_step(inputs)
        elif fields == ["reasoning", "answer"] and "trajectory" in inputs:
            answer = react_answer(inputs)
        elif fields == ["reasoning", "answer"] and "task" in inputs:
            answer = direct_answer(inputs)
        return answer if answer is not None else cast(ResponseLike | None, fallback(request))  # synchronous

    return rule
