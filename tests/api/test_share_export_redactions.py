"""Every credential of the corpus, and every secret the server itself holds, planted in a session: gone from the
JSON, Markdown and HTML exports, each export saying what it replaced (counts by kind) in the file and in the
X-Redactions header; ordinary text and the ids the export needs survive."""

from __future__ import annotations

import base64
import os
import re
import string
from collections import Counter

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from fleet_rlm.api.app import create_app
from fleet_rlm.config import Settings

from .isolation import new_session, seed_run
from .secret_corpus import CASES, COMMIT, NEGATIVES, RUN_UUID, rand

SECRET_KINDS = {case.kind for case in CASES} | {"configured_secret"}


def _configured(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> tuple[Settings, list[str]]:
    """The server's own secrets, none of a known format: only their values can give them away."""
    values = [rand(24) for _ in range(5)]
    monkeypatch.setenv("ANTHROPIC_API_KEY", values[3])  # a provider key LiteLLM would read itself
    monkeypatch.setenv("FLEET_TEST_SERVICE_TOKEN", values[4])
    configured = settings.model_copy(
        update={
            "lm_api_key": SecretStr(values[0]),
            "delegate_lm_api_key": SecretStr(values[1]),
            "daytona_api_key": SecretStr(values[2]),
            "secret_key": SecretStr(base64.urlsafe_b64encode(os.urandom(32)).decode()),
            "lm_model": "openai/fake",
        }
    )
    return configured, values


def _seed(client: TestClient, planted: list[str]) -> tuple[str, str, str]:
    sid = new_session(client, {}, "credentials everywhere")
    password, basic = rand(16), rand(20, string.ascii_lowercase)
    events = [("output", {"stream": "stdout", "text": case.text, "iteration": 1}) for case in CASES]
    events += [("output", {"stream": "stdout", "text": text, "iteration": 1}) for text in NEGATIVES]
    args = {"url": "https://api.example.org", "password": password, "headers": {"Authorization": f"Basic {basic}"}}
    events.append(("tool_call", {"call_id": "t1", "name": "http_get", "args": args}))
    message = "the server holds " + " and ".join(planted)
    run_id = seed_run(client, {}, sid, event_types=events, message=message, answer=f"ok {planted[0]}")
    return sid, run_id, password


def _expected() -> Counter[str]:
    expected = Counter(case.kind for case in CASES)
    expected.update({"configured_secret": 5 + 1, "password_field": 1, "authorization_header": 1})
    return expected


def _listed_counts(text: str) -> dict[str, int]:
    """The `kind: count` items of the Redaction list of a Markdown or HTML export (Markdown escapes `_`)."""
    found = re.findall(r"(?:> - |<li>)([a-z_\\]+): (\d+)", text)
    return {kind.replace("\\", ""): int(n) for kind, n in found if kind.replace("\\", "") in SECRET_KINDS}


def test_every_credential_is_gone_from_every_format_and_counted(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    configured, planted = _configured(settings, monkeypatch)
    with TestClient(create_app(configured)) as client:
        sid, run_id, password = _seed(client, planted)
        exports = {
            fmt: client.get(f"/api/v1/sessions/{sid}/export", params={"format": fmt})
            for fmt in ("json", "markdown", "html")
        }
    secrets = [case.secret for case in CASES] + planted + [password]
    expected = _expected()
    for fmt, response in exports.items():
        assert response.status_code == 200, response.text
        leaked = [secret for secret in secrets if secret in response.text]
        assert not leaked, (fmt, leaked)
        header = dict(pair.split("=") for pair in response.headers["x-redactions"].split(", "))
        assert {k: int(v) for k, v in header.items() if k in SECRET_KINDS} == expected, fmt
    bundle = exports["json"].json()
    assert bundle["redactions"] == dict(sorted(expected.items()))  # the archival bundle keeps identities: no more
    outputs = [e["payload"]["text"] for e in bundle["events"] if e["type"] == "output"]
    assert outputs[len(CASES) :] == NEGATIVES  # ordinary text, hashes and ids come out unchanged
    assert bundle["runs"][0]["id"] == run_id and bundle["session"]["id"] == sid
    for fmt in ("markdown", "html"):
        text = exports[fmt].text
        assert "Redactions in this file by kind, " in text
        assert _listed_counts(text) == expected, fmt
        assert COMMIT in text and RUN_UUID in text and run_id in text


def test_an_export_with_nothing_to_replace_says_so(settings: Settings) -> None:
    with TestClient(create_app(settings)) as client:
        sid = new_session(client, {}, "plain")
        seed_run(client, {}, sid, message=f"what changed in {COMMIT}?", answer="nothing secret")
        plain = client.get(f"/api/v1/sessions/{sid}/export")
        page = client.get(f"/api/v1/sessions/{sid}/export", params={"format": "markdown", "redact": "false"})
    assert plain.json()["redactions"] == {} and plain.headers["x-redactions"] == "none"
    assert "Nothing in this session needed replacing." in page.text and page.headers["x-redactions"] == "none"
