"""Fakes that are real implementations, for fleet-rlm's tests and benchmarks and for users' own tests.

The fake LM is an HTTP server on loopback speaking the OpenAI Chat Completions API (streaming included),
answering from a script of responses and rules and recording every request::

    from fleet_rlm.testing import FakeLMServer, dspy_fields

    with FakeLMServer([dspy_fields(answer="4")]) as lm:
        dspy.configure(lm=dspy.LM(lm.model, api_base=lm.base_url, api_key="fake", cache=False))
        assert dspy.Predict("question -> answer")(question="2+2?").answer == "4"

This package imports nothing from fleet_rlm except (at most) config, so any layer's tests may use it.
"""

from fleet_rlm.testing.fake_lm_auto import adapter_fields_rule, requested_output_fields
from fleet_rlm.testing.fake_lm_dspy import (
    dspy_fields,
    format_field_value,
    python_block,
    rlm_extract,
    rlm_step,
    rlm_submit,
    submit_code,
)
from fleet_rlm.testing.fake_lm_process import FakeLMProcess
from fleet_rlm.testing.fake_lm_rules import (
    contains_rule,
    first_match,
    is_adapter_request,
    is_sub_lm_request,
    sub_lm_rule,
)
from fleet_rlm.testing.fake_lm_script import DEFAULT_TEXT, FakeLMScript, load_script_file, script_from_spec
from fleet_rlm.testing.fake_lm_server import DEFAULT_MODEL, FakeLM, FakeLMServer
from fleet_rlm.testing.fake_lm_types import (
    FakeLMScriptError,
    FakeResponse,
    RecordedRequest,
    ResponseLike,
    Rule,
    estimate_tokens,
)

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_TEXT",
    "FakeLM",
    "FakeLMProcess",
    "FakeLMScript",
    "FakeLMScriptError",
    "FakeLMServer",
    "FakeResponse",
    "RecordedRequest",
    "ResponseLike",
    "Rule",
    "adapter_fields_rule",
    "contains_rule",
    "dspy_fields",
    "estimate_tokens",
    "first_match",
    "format_field_value",
    "is_adapter_request",
    "is_sub_lm_request",
    "load_script_file",
    "python_block",
    "requested_output_fields",
    "rlm_extract",
    "rlm_step",
    "rlm_submit",
    "script_from_spec",
    "sub_lm_rule",
    "submit_code",
]
