"""Telemetry tests reuse the runtime tests' fake LM, settings and runtime fixtures."""

from tests.runtime.conftest import fake_lm, lm, runtime, settings, warm_pricing  # noqa: F401
