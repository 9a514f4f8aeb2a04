"""Rule builders: answer requests by what they contain instead of by queue order.

A rule is ``(RecordedRequest) -> response | None``; None passes the request on (next rule, then the queue,
then the default). The key distinction for RLM tests is root vs sub-LM traffic: DSPy adapters (Chat, JSON,
XML) always send a system message describing "Your input fields are: ... Your output fields are: ...",
while ``dspy.RLM``'s ``llm_query(prompt)`` calls ``lm(prompt)``, which sends the raw prompt as a single
user message with no system message.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from fleet_rlm.testing.fake_lm_types import FakeLMScriptError, RecordedRequest, ResponseLike, Rule

Where = Literal["any", "last_user", "system"]
Kind = Literal["any", "root", "sub_lm"]

_ADAPTER_MARKERS = ("Your output fields are:", "Your input fields are:")


def is_adapter_request(request: RecordedRequest) -> bool:
    """True when a DSPy adapter formatted the request (a module's own LM call, e.g. an RLM action step)."""
    system = request.system_text
    return any(marker in system for marker in _ADAPTER_MARKERS)


def is_sub_lm_request(request: RecordedRequest) -> bool:
    """True for raw prompts such as ``llm_query``/``llm_query_batched`` calls (no DSPy adapter framing)."""
    return not is_adapter_request(request)


def _haystack(request: RecordedRequest, where: Where) -> str:
    if where == "last_user":
        return request.last_user_text
    if where == "system":
        return request.system_text
    return request.text


def _matches_kind(request: RecordedRequest, kind: Kind) -> bool:
    if kind == "root":
        return is_adapter_request(request)
    if kind == "sub_lm":
        return is_sub_lm_request(request)
    return True


def contains_rule(mapping: Mapping[str, ResponseLike], *, where: Where = "any", kind: Kind = "any") -> Rule:
    """Answer with the first entry whose key occurs in the request text (``where``); else pass."""
    items = list(mapping.items())

    def rule(request: RecordedRequest) -> ResponseLike | None:
        if not _matches_kind(request, kind):
            return None
        text = _haystack(request, where)
        for needle, response in items:
            if needle in text:
                return response
        return None

    return rule


def sub_lm_rule(respond: ResponseLike | Callable[[str], ResponseLike | None]) -> Rule:
    """Answer sub-LM (``llm_query``) prompts; adapter-formatted (root) requests pass to the queue.

    ``respond`` is a fixed response, or a function of the prompt text (the last user message) that returns
    a response or None to pass.
    """

    def rule(request: RecordedRequest) -> ResponseLike | None:
        if not is_sub_lm_request(request):
            return None
        if callable(respond):
            return respond(request.last_user_text)
        return respond

    return rule


def first_match(*rules: Rule) -> Rule:
    """Combine rules: the first one that does not return None answers. Async rules are awaited."""

    async def combined(request: RecordedRequest) -> ResponseLike | None:
        for rule in rules:
            result: Any = rule(request)
            if inspect.isawaitable(result):
                result = await result
            if result is not None:
                return result  # type: ignore[no-any-return]
        return None

    return combined


def rules_from_spec(specs: Sequence[Mapping[str, Any]]) -> list[Rule]:
    """Rules from a JSON script file: ``{"contains": str?, "where": ..., "kind": ..., "respond": response}``.

    Without ``contains`` the rule matches every request of its ``kind`` (e.g. all sub-LM prompts).
    """
    rules: list[Rule] = []
    for spec in specs:
        unknown = set(spec) - {"contains", "where", "kind", "respond"}
        if unknown or "respond" not in spec:
            raise FakeLMScriptError(
                f"bad rule {dict(spec)!r}: needs 'respond' and only contains/where/kind/respond keys."
            )
        where = spec.get("where", "any")
        kind = spec.get("kind", "any")
        if where not in ("any", "last_user", "system") or kind not in ("any", "root", "sub_lm"):
            raise FakeLMScriptError(f"bad rule {dict(spec)!r}: where in any/last_user/system, kind in any/root/sub_lm.")
        needle = spec.get("contains", "")
        if not isinstance(needle, str):
            raise FakeLMScriptError(f"bad rule {dict(spec)!r}: 'contains' must be a string.")
        rules.append(contains_rule({needle: spec["respond"]}, where=where, kind=kind))
    return rules
