"""The share redactor: credentials of every shape go, ordinary text stays, identities only when asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_rlm.services.share_redact import KEY_MARK, Redactor

pytestmark = pytest.mark.db_independent

CREDENTIALS = [
    "sk-proj-abcdefghijklmnop0123",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "AKIAABCDEFGHIJKLMNOP",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl",
    "the configured one: zzzzzzzzqqqqqqqq",
]


def test_credentials_are_removed_and_counted() -> None:
    redactor = Redactor(secrets=["zzzzzzzzqqqqqqqq", "EMPTY"], identify=False)
    for text in CREDENTIALS:
        assert KEY_MARK in redactor.text(text), text
    header = redactor.text("curl -H 'Authorization: Bearer abc123def456ghi789' -H \"x-api-key: k-0123456789\"")
    assert "abc123def456ghi789" not in header and "k-0123456789" not in header and "Authorization: " in header
    assigned = redactor.text('client = OpenAI(api_key="live0123456789") ; password=hunter2hunter2')
    assert "live0123456789" not in assigned and "hunter2hunter2" not in assigned and "api_key=" in assigned
    assert redactor.value({"api_key": "zzzzzzzzqqqqqqqq", "nested": ["zzzzzzzzqqqqqqqq"]}) == {
        "api_key": KEY_MARK,
        "nested": [KEY_MARK],
    }
    assert redactor.counts["configured key"] == 3 and redactor.counts["provider key"] == 3
    assert "EMPTY" in redactor.text("EMPTY is a placeholder, not a secret")


def test_ordinary_text_is_left_alone() -> None:
    redactor = Redactor(secrets=["zzzzzzzzqqqqqqqq"], identities={"c" * 32: "user-1"})
    for text in (
        "The tokenizer splits text into tokens; basic arithmetic gives 42.",
        "token distributions and secret sauce recipes",
        "a local file at /workspace/artifacts/report.md",
        "2026-12-01T23:00:00Z",
    ):
        assert redactor.text(text) == text
    assert redactor.report()[-1] == "Nothing in this session needed replacing."


def test_identities_and_host_paths_only_when_identifying(tmp_path: Path) -> None:
    user_id, workspace_id = "a" * 32, "b" * 32
    text = f"user {user_id} in {tmp_path}/workspaces/{workspace_id}/x.csv, /home/alice/.ssh, mail alice@example.com"
    kept = Redactor(identify=False, identities={user_id: "user-1"}, paths={str(tmp_path): "<data>"})
    assert kept.text(text) == text and "were kept" in kept.report()[1]
    gone = Redactor(identities={user_id: "user-1", workspace_id: "workspace-1"}, paths={str(tmp_path): "<data>"})
    assert gone.text(text) == "user user-1 in <data>/workspaces/workspace-1/x.csv, ~/.ssh, mail <email>"
    assert gone.text(user_id) == "user-1"  # an id alone (a JSON field) too
