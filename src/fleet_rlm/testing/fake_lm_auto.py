"""A rule that answers ANY DSPy adapter request by reading the output fields the request asks for.

Useful when a test (or a demo server) drives programs whose signatures it does not script one by one: the
router, a direct answer, a ReAct step. Values come from a mapping by field name, else a default; RLM action
steps (`reasoning` + `code`) get code that submits the default answer, so a whole turn completes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from fleet_rlm.testing.fake_lm_dspy import dspy_fields, python_block
from fleet_rlm.testing.fake_lm_rules import is_adapter_request
from fleet_rlm.testing.fake_lm_types import RecordedRequest, ResponseLike, Rule

_OUTPUT_SECTION = re.compile(r"Your output fields are:(.*?)(?:All interactions will be structured|$)", re.S)
_FIELD = re.compile(r"^\s*\d+\.\s+`(\w+)`(?:\s*\((.*?)\))?:?", re.M)
_LITERAL_OPTION = re.compile(r"Literal\[\s*['\"]([^'\"]+)['\"]")


def requested_field_types(request: RecordedRequest) -> dict[str, str]:
    """Output field names -> their type text, in the order the adapter's system message lists them."""
    match = _OUTPUT_SECTION.search(request.system_text)
    return {name: kind or "str" for name, kind in _FIELD.findall(match.group(1))} if match else {}


def requested_output_fields(request: RecordedRequest) -> list[str]:
    """Output field names in the order the adapter's system message lists them (empty if not an adapter call)."""
    return list(requested_field_types(request))


def typed_default(kind: str, answer: str) -> Any:
    """A value that parses as `kind` (the adapter's type text): numbers, booleans, literals, containers."""
    literal = _LITERAL_OPTION.search(kind)
    if literal:
        return literal.group(1)
    lowered = kind.lower()
    if lowered.startswith("float"):
        return 0.9
    if lowered.startswith("int"):
        return 1
    if lowered.startswith("bool"):
        return True
    if lowered.startswith(("list", "tuple", "set")):
        return []
    if lowered.startswith("dict"):
        return {}
    return answer


def adapter_fields_rule(
    values: Mapping[str, Any] | None = None,
    *,
    answer: str = "This is the fake model's answer.",
    choose: Callable[[str, RecordedRequest], Any] | None = None,
) -> Rule:
    """Answer adapter requests field by field: `choose(field, request)`, then `values[field]`, then defaults.

    Defaults: `reasoning` gets a short sentence; `code` (an RLM action step) submits `answer` to whichever
    output names the request's SUBMIT instructions mention (falling back to `answer`); anything else gets `answer`.
    """
    fixed = dict(values or {})

    def value_for(field: str, request: RecordedRequest, fields: dict[str, str]) -> Any:
        if choose is not None:
            chosen = choose(field, request)
            if chosen is not None:
                return chosen
        if field in fixed:
            return fixed[field]
        if field == "reasoning":
            return "Working through the task step by step."
        if field == "code" and "reasoning" in fields:
            target = _submit_target(request)
            return python_block(f"SUBMIT({target}={answer!r})")
        return typed_default(fields[field], answer)

    def rule(request: RecordedRequest) -> ResponseLike | None:
        if not is_adapter_request(request):
            return None
        fields = requested_field_types(request)
        if not fields:
            return None
        return dspy_fields(**{field: value_for(field, request, fields) for field in fields})

    return rule


_SUBMIT_HINT = re.compile(r"SUBMIT\((\w+)")


def _submit_target(request: RecordedRequest) -> str:
    """The first output name RLM's instructions show in `SUBMIT(...)`, e.g. `answer`."""
    match = _SUBMIT_HINT.search(request.text)
    return match.group(1) if match and match.group(1) not in {"field", "output"} else "answer"
