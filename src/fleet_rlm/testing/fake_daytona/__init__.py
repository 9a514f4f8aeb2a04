"""A fake Daytona server the real `daytona` SDK talks to unchanged (control plane + toolbox), for tests.

Sandboxes are host directories; their commands, sessions and interpreter contexts are real subprocesses (in a
bubblewrap mount namespace when available, so guest paths like /home/daytona exist). It is a test fake, NOT a
security boundary: sandboxed code can read the host file system and use the host network.

    from fleet_rlm.testing.fake_daytona import FakeDaytonaServer

    with FakeDaytonaServer() as fake:
        daytona = AsyncDaytona(DaytonaConfig(api_key=fake.api_key, api_url=fake.api_url, target="us"))

Out of process: `python -m fleet_rlm.testing.fake_daytona --port 3986 --api-key KEY`.
"""

from __future__ import annotations

from .server import FakeDaytonaServer
from .state import RecordedCall

__all__ = ["FakeDaytonaServer", "RecordedCall"]
