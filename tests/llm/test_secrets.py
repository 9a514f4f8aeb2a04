"""API keys at rest: Fernet round trip, the key from settings or a 0600 key file, masking."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr

from fleet_rlm.config import Settings
from fleet_rlm.llm import SecretBox, SecretError, load_or_create_key, mask, secret_box


def make_settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(_env_file=None, data_dir=tmp_path / "data", **values)  # type: ignore[arg-type]


def test_round_trip() -> None:
    box = SecretBox(Fernet.generate_key())
    token = box.encrypt("sk-live-1234567890abcdef")
    assert "1234567890" not in token
    assert box.decrypt(token) == "sk-live-1234567890abcdef"
    assert box.encrypt("x") != box.encrypt("x")  # fresh IV each time


def test_wrong_key_cannot_decrypt() -> None:
    token = SecretBox(Fernet.generate_key()).encrypt("sk-abc")
    with pytest.raises(SecretError) as info:
        SecretBox(Fernet.generate_key()).decrypt(token)
    assert info.value.code == "secret_undecryptable" and "FLEET_SECRET_KEY" in (info.value.action or "")


def test_key_file_is_created_once_with_mode_0600(tmp_path: Path) -> None:
    settings = make_settings(tmp_path)
    key = load_or_create_key(settings)
    path = settings.data_dir / "secret.key"
    assert path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_key(settings) == key
    token = secret_box(settings).encrypt("sk-persisted")
    assert secret_box(make_settings(tmp_path)).decrypt(token) == "sk-persisted"


def test_key_from_settings_wins_and_writes_no_file(tmp_path: Path) -> None:
    key = Fernet.generate_key()
    settings = make_settings(tmp_path, secret_key=key.decode())
    assert load_or_create_key(settings) == key
    assert not (settings.data_dir / "secret.key").exists()


def test_malformed_keys_are_explained(tmp_path: Path) -> None:
    with pytest.raises(SecretError) as info:
        load_or_create_key(make_settings(tmp_path, secret_key="not-a-key"))
    assert info.value.code == "invalid_secret_key" and "Fernet.generate_key" in (info.value.action or "")
    settings = make_settings(tmp_path)
    settings.data_dir.mkdir(parents=True)
    (settings.data_dir / "secret.key").write_text("garbage")
    with pytest.raises(SecretError, match="not a valid Fernet key"):
        load_or_create_key(settings)


def test_mask() -> None:
    assert mask("sk-proj-abcdefghijklmnopqrstuvwxyz1234") == "sk-…1234"
    assert mask(SecretStr("sk-1234567890abcd")) == "sk-…abcd"
    assert mask("short1") == "…t1"
    assert mask("abc") == "…"
    assert mask("") == "" and mask(None) == ""
