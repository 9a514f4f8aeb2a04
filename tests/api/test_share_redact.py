"""The share redactor: credentials of every shape go, ordinary text stays, identities only when asked."""

from __future__ import annotations

import string
import time
from pathlib import Path

import pytest
from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.services.secret_rules import KINDS, key_kind
from fleet_rlm.services.share_redact import KEY_MARK, Redactor, settings_secrets

from .secret_corpus import CASES, NEGATIVES, rand

pytestmark = pytest.mark.db_independent


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kind}-{i}" for i, c in enumerate(CASES)])
def test_every_known_credential_form_is_removed_and_counted_once(case) -> None:  # type: ignore[no-untyped-def]
    redactor = Redactor(identify=False)
    out = redactor.text(case.text)
    assert case.secret not in out and KEY_MARK in out, out
    assert redactor.redactions == {case.kind: 1}


def test_the_corpus_covers_every_rule_and_nothing_ordinary_is_touched() -> None:
    assert set(KINDS) == {case.kind for case in CASES}
    redactor = Redactor(identify=False)
    for text in NEGATIVES:
        assert redactor.text(text) == text
    assert redactor.redactions == {}


def test_structured_keys_with_a_secret_name_lose_their_string_value() -> None:
    token, password = rand(24), rand(16)
    data = {
        "args": {"password": password, "OPENAI_API_KEY": "short", "apiKey": None, "max_tokens": 4096},
        "headers": {"Authorization": f"Basic {rand(20, string.ascii_lowercase)}", "Accept": "application/json"},
        "env": [{"GITHUB_TOKEN": token, "tokens": "1234567890"}],
        "clientSecret": "None",
    }
    redactor = Redactor(identify=False)
    out = redactor.value(data)
    assert out["args"] == {"password": KEY_MARK, "OPENAI_API_KEY": KEY_MARK, "apiKey": None, "max_tokens": 4096}
    assert out["headers"] == {"Authorization": KEY_MARK, "Accept": "application/json"}
    assert out["env"] == [{"GITHUB_TOKEN": KEY_MARK, "tokens": "1234567890"}] and out["clientSecret"] == "None"
    assert redactor.redactions == {"api_key_field": 1, "authorization_header": 1, "password_field": 1, "token_field": 1}
    assert [key_kind(k) for k in ("prompt_tokens", "password_file", "secret_sauce", "db-passwd")] == [
        None,
        None,
        None,
        "password_field",
    ]


def test_the_server_s_configured_secrets_are_found_by_value(tmp_path: Path) -> None:
    lm, jwt, db_pw, hf, aws = rand(20), rand(40), rand(16), rand(30), rand(40)
    configured = Settings(  # type: ignore[call-arg]
        _env_file=None,
        data_dir=tmp_path,
        lm_api_key=SecretStr(lm),
        jwt_secret=SecretStr(jwt),
        daytona_api_key=SecretStr("short"),
        database_url=f"postgresql+psycopg://fleet:{db_pw}@127.0.0.1:5432/fleet",
    )
    environ = {"HF_TOKEN": hf, "AWS_SECRET_ACCESS_KEY": aws, "HOME": "/root", "GOOGLE_CREDENTIALS": "/etc/k.json"}
    environ |= {"TOKENIZERS_PARALLELISM": "false_or_true", "DEBUG_TOKEN": "EMPTY"}
    found = settings_secrets(configured, environ)
    assert sorted(found) == sorted([lm, jwt, db_pw, hf, aws])
    redactor = Redactor(secrets=found, identify=False)
    out = redactor.text(f"the model said {lm} then {hf}; and {db_pw}. aws {aws} jwt {jwt} HOME /root")
    assert all(value not in out for value in found) and "/root" in out
    assert redactor.redactions == {"configured_secret": 5}


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
    assert redactor.counts["configured_secret"] == 3 and redactor.counts["openai_key"] == 1
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
    assert redactor.report()[-1] == "Nothing in this session needed replacing." and redactor.redactions == {}


def test_identities_and_host_paths_only_when_identifying(tmp_path: Path) -> None:
    user_id, workspace_id = "a" * 32, "b" * 32
    text = f"user {user_id} in {tmp_path}/workspaces/{workspace_id}/x.csv, /home/alice/.ssh, mail alice@example.com"
    kept = Redactor(identify=False, identities={user_id: "user-1"}, paths={str(tmp_path): "<data>"})
    assert kept.text(text) == text and "were kept" in kept.report()[1]
    gone = Redactor(identities={user_id: "user-1", workspace_id: "workspace-1"}, paths={str(tmp_path): "<data>"})
    assert gone.text(text) == "user user-1 in <data>/workspaces/workspace-1/x.csv, ~/.ssh, mail <email>"
    assert gone.text(user_id) == "user-1"  # an id alone (a JSON field) too


@pytest.mark.parametrize(
    "hostile",
    [
        "a." * 100_000 + "://x:y@ token=",  # many URL-scheme starts, none ending in ://
        "a-" * 100_000 + " http://u:p@h",
        "sk-" * 70_000,  # many key starts, no digit
        '"' * 200_000 + " password= token=",
        "Bearer " * 30_000 + "Authorization: " * 10_000,
    ],
    ids=["dotted-scheme", "dashed-scheme", "sk-run", "quotes", "auth-words"],
)
def test_hostile_text_is_redacted_in_linear_time(hostile: str) -> None:
    """Sandbox output is hostile: no rule may rescan the rest of the text from each of many starts (the unbounded
    URL scheme and `sk-` lookahead took minutes on 200 KB)."""
    started = time.perf_counter()
    Redactor(identify=True, paths={"/srv/data": "<data>"}).text(hostile)
    assert time.perf_counter() - started < 5.0
