"""One wording per error code: the chat's check of a private URL and the server's say the same, a repository
host that does not resolve is `context_repo_failed` wherever it is checked, a directory given as a file is
`file_is_directory` (not 'no such file'), and a code in the errors table keeps its one action."""

from __future__ import annotations

from pathlib import Path

import pytest

from fleet_rlm.cli.client import require_file
from fleet_rlm.cli.targets import check_repo_target, check_url_target
from fleet_rlm.errors import ACTIONS, ALLOW_PRIVATE_URLS, FleetError
from fleet_rlm.runtime.context.netguard import REPO_CODES, check_url


def refusal(call, *args, **kwargs) -> FleetError:  # type: ignore[no-untyped-def]
    with pytest.raises(FleetError) as caught:
        call(*args, **kwargs)
    return caught.value


def test_a_private_url_is_refused_in_the_same_words_by_chat_and_server() -> None:
    chat = refusal(check_url_target, "http://127.0.0.1:9/x", allow_private=False)
    server = refusal(check_url, "http://127.0.0.1:9/x", allow_private=False)
    assert chat.to_dict() == server.to_dict()
    assert chat.code == "context_url_blocked" and ALLOW_PRIVATE_URLS in (chat.action or "")


def test_a_repository_is_refused_with_repository_codes() -> None:
    failed = refusal(check_url, "https://nosuch.invalid/o/r", allow_private=False, codes=REPO_CODES)
    assert failed.code == "context_repo_failed"
    private = refusal(check_repo_target, "https://127.0.0.1/o/r", allow_private=False)
    assert private.code == "context_repo_blocked" and ALLOW_PRIVATE_URLS in (private.action or "")


def test_a_directory_is_not_a_missing_file(tmp_path: Path) -> None:
    folder = refusal(require_file, tmp_path)
    assert folder.code == "file_is_directory" and "is a directory" in folder.message
    missing = refusal(require_file, tmp_path / "nope.txt")
    assert missing.code == "file_not_found" and missing.action == ACTIONS["file_not_found"]
    assert FleetError("x", code="file_not_found", action="other words").action == ACTIONS["file_not_found"]
