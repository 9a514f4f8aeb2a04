"""Fixtures for the llm tests: a real fake-LM HTTP server and settings with a private data dir."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from fleet_rlm.config import Settings
from fleet_rlm.llm import LMProfile
from fleet_rlm.testing import FakeLMServer


@pytest.fixture
def lm_server() -> Iterator[FakeLMServer]:
    with FakeLMServer(default="OK") as server:
        yield server


@pytest.fixture
def llm_settings(tmp_path: Path) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", lm_timeout_s=10, lm_num_retries=0)  # type: ignore[call-arg]


@pytest.fixture
def fake_profile(lm_server: FakeLMServer) -> LMProfile:
    return LMProfile(name="fake", model=lm_server.model, api_base=lm_server.base_url, api_key="fake-key")


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def pytest_configure(config: pytest.Config) -> None:
    """Import litellm once while collecting: its import is slow (seconds) and would be billed to a test."""
    import litellm  # noqa: F401
