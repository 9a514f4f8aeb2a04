"""Fixtures of the security suites (module-scoped data dir and database for one server per module)."""

from tests.security.harness import module_data

__all__ = ["module_data"]
