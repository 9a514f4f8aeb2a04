"""``FakeLMProcess``: start the fake LM CLI as a child process and wait for its ready line.

For tests whose LM clients live in another process (a ``fleet web`` server under a browser test): the fake
keeps answering even while the test process blocks. Scripting at run time goes through the HTTP control
API (``push``/``requests`` here wrap ``/_fake/responses`` and ``/_fake/requests``).
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from fleet_rlm.testing.fake_lm_types import FakeResponse, ResponseLike


def _wire(value: ResponseLike) -> Any:
    if isinstance(value, FakeResponse):
        data = {k: getattr(value, k) for k in value.__dataclass_fields__}
        return {k: (dict(v) if k == "headers" else v) for k, v in data.items() if v is not None}
    return dict(value) if not isinstance(value, str) else value


class FakeLMProcess:
    """``with FakeLMProcess(script=path) as lm: lm.base_url`` — a fake LM in a subprocess."""

    def __init__(
        self,
        script: str | Path | None = None,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        extra_args: list[str] | None = None,
        startup_timeout_s: float = 20.0,
    ) -> None:
        self.args = [sys.executable, "-m", "fleet_rlm.testing.fake_lm", "--host", host, "--port", str(port)]
        if script is not None:
            self.args += ["--script", str(script)]
        self.args += extra_args or []
        self.startup_timeout_s = startup_timeout_s
        self.proc: subprocess.Popen[str] | None = None
        self.base_url = ""
        self.port = 0
        self.model = ""

    def start(self) -> FakeLMProcess:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert self.proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + self.startup_timeout_s
        line = ""
        while not line.startswith("fake-lm ready"):
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not selector.select(remaining):
                self.stop()
                raise TimeoutError(f"fake LM process gave no ready line within {self.startup_timeout_s}s")
            line = self.proc.stdout.readline()
            if not line:
                stderr = self.proc.stderr.read() if self.proc.stderr else ""
                self.stop()
                raise RuntimeError(f"fake LM process exited before it was ready: {stderr.strip()}")
        selector.close()
        fields = dict(part.split("=", 1) for part in line.split()[2:])
        self.base_url, self.port, self.model = fields["base_url"], int(fields["port"]), fields["model"]
        return self

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> FakeLMProcess:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return self.base_url.removesuffix("/v1")

    def push(self, *responses: ResponseLike) -> int:
        """Queue responses in the child; returns how many are pending."""
        import httpx  # lazily: keeps the CLI's start-up (which imports this package) fast

        payload = [_wire(r) for r in responses]
        reply = httpx.post(f"{self.url}/_fake/responses", content=json.dumps(payload), timeout=10)
        reply.raise_for_status()
        return int(reply.json()["pending"])

    def requests(self) -> list[dict[str, Any]]:
        """The child's request log (``RecordedRequest.to_dict`` form)."""
        import httpx

        reply = httpx.get(f"{self.url}/_fake/requests", timeout=10)
        reply.raise_for_status()
        return list(reply.json()["requests"])
