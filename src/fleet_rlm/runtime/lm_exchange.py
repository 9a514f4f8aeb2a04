"""What a recorded LM exchange is: the canonical request (what DSPy sends, minus client settings), its hash,
the items a turn's recorder hands its sink, and the turn inputs a replay rebuilds the request from.

Shared by the recorder (runtime/recording.py), the replay LMs (runtime/replay_lm.py) and the persistence side
(services/recordings.py), so a request is rendered and hashed the same way everywhere. A replay reads the
recorded inputs back through `runtime/replay_inputs.py`, which validates them.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

import pydantic

from fleet_rlm.runtime.contracts import TurnRequest
from fleet_rlm.runtime.repl_snapshots import ReplSnapshot

CLIENT_KEYS = frozenset(
    {
        "api_key",
        "api_base",
        "base_url",
        "headers",
        "extra_headers",
        "default_headers",
        "timeout",
        "api_version",
        "azure_ad_token_provider",
        "azure_ad_token",
        "organization",
        "project",
        "extra_query",
        "custom_llm_provider",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "vertex_credentials",
        "num_retries",
        "cache",
        "engine",
    }
)
"""Connection and execution settings: never part of a recorded request (and never stored)."""
SECRETISH = re.compile(r"(key|token|secret|passw|auth|credential|cookie|bearer)", re.IGNORECASE)
REDACTED = "[REDACTED]"
MIN_SECRET_CHARS = 8  # "EMPTY" (the placeholder key of local servers) is not scrubbed from texts


def jsonable(value: Any) -> Any:
    """A JSON-safe copy (pydantic models and classes by their schema, anything else by its text)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, type) and issubclass(value, pydantic.BaseModel):
        return {"json_schema": value.model_json_schema(), "name": value.__name__}
    if isinstance(value, pydantic.BaseModel):
        return jsonable(value.model_dump(mode="json"))
    return str(value)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def public_params(params: dict[str, Any]) -> dict[str, Any]:
    """Generation parameters without client settings or anything named like a credential."""
    return {
        k: jsonable(v) for k, v in params.items() if v is not None and k not in CLIENT_KEYS and not SECRETISH.search(k)
    }


def canonical_request(lm: Any, prompt: Any, messages: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The request as DSPy sends it (model, rendered messages, merged parameters) minus client settings."""
    params = public_params({**(getattr(lm, "kwargs", None) or {}), **kwargs})
    rendered = messages if messages is not None else [{"role": "user", "content": prompt}]
    return {
        "model": str(getattr(lm, "model", "")),
        "model_type": str(getattr(lm, "model_type", "chat")),
        "messages": jsonable(rendered),
        "params": params,
    }


def request_hash(request: dict[str, Any]) -> str:
    return text_hash(canonical_json(request))


def text_hash(canonical: str) -> str:
    """`request_hash` of a request whose canonical JSON is already at hand."""
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def secrets_of(lm: Any) -> set[str]:
    """Secret values configured on an LM (its api_key and any other key-like setting)."""
    found: set[str] = set()
    for key, value in (getattr(lm, "kwargs", None) or {}).items():
        if (key in CLIENT_KEYS or SECRETISH.search(key)) and isinstance(value, str) and len(value) >= MIN_SECRET_CHARS:
            found.add(value)
        if isinstance(value, dict) and key in CLIENT_KEYS:  # headers: every value may carry a credential
            found.update(v for v in value.values() if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS)
    return found


def lm_identity(lm: Any) -> dict[str, Any]:
    """What adapters see of an LM besides its answers (model, API type, capabilities): a replay LM presents the
    same, so DSPy formats the same requests (e.g. structured outputs only when the schema is supported)."""
    caps = _capabilities_of(lm)
    if caps is not None:
        flags: tuple[Any, ...] = (caps.function_calling, caps.reasoning, caps.response_schema)
        params: Any = caps.params
    else:
        flags = tuple(_flag(lm, name) for name in _CAPABILITY_FLAGS)
        try:
            params = lm.supported_params
        except Exception:
            params = ()
    return {
        "model": str(lm.model),
        "model_type": str(getattr(lm, "model_type", "chat")),
        **{name: bool(value) for name, value in zip(_CAPABILITY_FLAGS, flags, strict=True)},
        "supported_params": sorted(str(p) for p in params),
    }


def _flag(lm: Any, name: str) -> bool:
    try:
        return bool(getattr(lm, name))
    except Exception:
        return False


_CAPABILITY_FLAGS = ("supports_function_calling", "supports_reasoning", "supports_response_schema")


def _capabilities_of(lm: Any) -> Any:
    """A `dspy.LM`'s capabilities, looked up once: each of its four capability properties repeats the lookup
    (~0.03 ms with `llm/model_metadata`'s memo, ~0.4 ms without it for a model dspy's price table does not list),
    and a recorded turn reads all four for each role it uses. None for any other LM, or one that overrides a
    property: read those one by one."""
    import dspy
    from dspy.clients.capabilities import capabilities

    cls = type(lm)
    if not isinstance(lm, dspy.LM) or any(
        getattr(cls, name) is not getattr(dspy.LM, name) for name in (*_CAPABILITY_FLAGS, "supported_params")
    ):
        return None
    try:
        return capabilities(lm)
    except Exception:
        return None


@dataclass(frozen=True)
class TurnInputs:
    """What a replay needs to rebuild the turn: the request minus its LMs (no secrets in a TurnRequest)."""

    inputs: dict[str, Any]


@dataclass(frozen=True)
class LMExchange:
    """One LM call. `request` / `response` are None when the run's byte budget was spent (`truncated`)."""

    seq: int
    role: str
    actor: str
    depth: int
    request_hash: str
    request: dict[str, Any] | None
    response: dict[str, Any] | None
    error: str | None = None
    truncated: bool = False
    lm_params: dict[str, Any] = field(default_factory=dict)
    """The LM's own parameters (temperature, max_tokens...; no client settings): a replay LM renders with them."""


@dataclass(frozen=True)
class RecordingDone:
    calls: int
    bytes: int
    truncated: bool
    status: str
    answer: str
    programs: dict[str, str] = field(default_factory=dict)
    """module -> the program version the turn actually ran (a replay pins exactly these)."""


RecordedItem = TurnInputs | LMExchange | RecordingDone | ReplSnapshot
"""What a turn's sink persists beside its events: LM recordings and the REPL's per-iteration snapshots."""


@runtime_checkable
class RecordingSink(Protocol):
    """An EventSink that also persists recordings (thread-safe, like `emit`)."""

    def record_lm(self, item: RecordedItem) -> None: ...


def turn_inputs(request: TurnRequest) -> TurnInputs:
    """The request's replayable part (task, context sources, history, summary, options, program pins)."""
    return TurnInputs(
        {
            "task": request.task,
            "options": asdict(request.options),
            "sources": [asdict(s) for s in request.sources],
            "history": [asdict(h) for h in request.history],
            "session_summary": request.session_summary,
            "program_versions": dict(request.program_versions),
            "session_id": request.session_id,
            "workspace_id": request.workspace_id,
        }
    )
