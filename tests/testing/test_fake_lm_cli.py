"""The fake LM out of process (``python -m fleet_rlm.testing.fake_lm``) and JSON script files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from fleet_rlm.testing import FakeLMProcess, FakeLMScriptError, FakeResponse, script_from_spec


def ask(base_url: str, text: str) -> httpx.Response:
    body = {"model": "fake-model", "messages": [{"role": "user", "content": text}]}
    return httpx.post(f"{base_url}/chat/completions", json=body, timeout=10)


def content(reply: httpx.Response) -> str:
    return str(reply.json()["choices"][0]["message"]["content"])


def test_process_serves_script_file(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    spec = {
        "responses": ["first", {"status": 429, "retry_after": 2, "error": "slow down"}],
        "rules": [{"contains": "secret", "where": "last_user", "respond": "rule hit"}],
        "default": "nothing left",
        "model": "openai/scripted-model",
    }
    script.write_text(json.dumps(spec), encoding="utf-8")
    with FakeLMProcess(script) as lm:
        assert lm.base_url == f"http://127.0.0.1:{lm.port}/v1"
        assert lm.model == "openai/scripted-model"
        assert content(ask(lm.base_url, "hello")) == "first"
        assert content(ask(lm.base_url, "the secret word")) == "rule hit"
        limited = ask(lm.base_url, "again")
        assert limited.status_code == 429 and limited.headers["retry-after"] == "2"
        assert content(ask(lm.base_url, "more")) == "nothing left"
        assert lm.push("pushed later", FakeResponse("pushed object")) == 2
        assert content(ask(lm.base_url, "x")) == "pushed later"
        assert content(ask(lm.base_url, "y")) == "pushed object"
        log = lm.requests()
        assert [r["body"]["messages"][0]["content"] for r in log][:2] == ["hello", "the secret word"]
        models = httpx.get(f"{lm.base_url}/models", timeout=10).json()
        assert models["data"][0]["id"] == "scripted-model"


def test_process_without_script_uses_default_flag(tmp_path: Path) -> None:
    ready = tmp_path / "ready.txt"
    with FakeLMProcess(extra_args=["--default", "cli default", "--ready-file", str(ready)]) as lm:
        assert content(ask(lm.base_url, "hi")) == "cli default"
        assert ready.read_text(encoding="utf-8").startswith("fake-lm ready base_url=")


def test_bad_script_file_exits_with_code(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text(json.dumps({"responses": [{"colour": "blue"}]}), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "fleet_rlm.testing.fake_lm", "--script", str(script)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "error[fake_lm.bad_script]" in result.stderr and "colour" in result.stderr


def test_script_spec_validation() -> None:
    script = script_from_spec(["a", {"text": "b", "delay": 0.1}])
    assert script.pending == 2
    with pytest.raises(FakeLMScriptError, match="unknown script keys"):
        script_from_spec({"responses": [], "extra": 1})
    with pytest.raises(FakeLMScriptError, match="needs 'respond'"):
        script_from_spec({"rules": [{"contains": "x"}]})
    with pytest.raises(FakeLMScriptError, match="kind in"):
        script_from_spec({"rules": [{"respond": "x", "kind": "child"}]})
