"""Fixtures shared by the API tests: a fake LM, the app's settings on it, and a started app's TestClient.

A test module overrides `lm` (its rules) or `app_settings` (auth mode, budgets) by defining its own fixture of
that name; `client` then follows.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings
from fleet_rlm.testing import FakeLMServer, adapter_fields_rule, sub_lm_rule
from tests.helpers import fake_lm_settings


@pytest.fixture
def lm() -> Iterator[FakeLMServer]:
    with FakeLMServer(rules=[sub_lm_rule("sub answer"), adapter_fields_rule(answer="forty-two")]) as server:
        yield server


@pytest.fixture
def app_settings(settings: Settings, lm: FakeLMServer) -> Settings:
    return fake_lm_settings(settings, lm)


@pytest.fixture
def client(app_settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(app_settings)) as test_client:
        yield test_client
