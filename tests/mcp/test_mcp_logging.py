"""Building the app (and its MCP server) leaves the process's logging alone: the SDK's constructor would install
a rich stderr handler on the root logger, which put tracebacks on the CLI's stderr in in-process mode."""

from __future__ import annotations

import logging

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings


def test_create_app_adds_no_root_log_handler(settings: Settings) -> None:
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    create_app(settings)
    assert root.handlers == before and root.level == level
