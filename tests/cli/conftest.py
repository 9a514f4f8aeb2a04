"""Every CLI test leaves no local server behind: the ones it started (found by their discovery files) stop."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.helpers import stop_local_servers


@pytest.fixture(autouse=True)
def _no_local_server_left(tmp_path: Path) -> Iterator[None]:
    yield
    stop_local_servers(tmp_path)
