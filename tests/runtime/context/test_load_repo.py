"""Repository sources: shallow clones of a local repository over file://, reuse, refs, refusals and limits."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from fleet_rlm.config import Settings
from fleet_rlm.errors import FleetError
from fleet_rlm.runtime.context import ContextLimits, LoadedDocument, load_context
from fleet_rlm.runtime.context.repo import _run
from fleet_rlm.runtime.contracts import CancelToken, ContextSource

from .conftest import ctx_of, make_settings

GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    repo = tmp_path / "origin" / "demo-project"
    (repo / "src").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# Demo\n\nA demo repository.\n")
    (repo / "src" / "app.py").write_text("print('hello')\n")
    (repo / "passwd-link").symlink_to("/etc/passwd")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "first")
    _git(repo, "tag", "v1")
    _git(repo, "checkout", "-qb", "feature")
    (repo / "feature.txt").write_text("only on the branch\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "feature")
    _git(repo, "checkout", "-q", "main")
    return repo


def _load(url: str, workspace: Path, settings: Settings, ref: str | None = None, **limits: int) -> LoadedDocument:
    source = ContextSource(kind="repo", url=url, ref=ref)
    bounds = ContextLimits(**limits) if limits else None  # type: ignore[arg-type]
    return load_context(
        [source], workspace_dir=workspace, context_dir=ctx_of(workspace), settings=settings, limits=bounds
    ).documents[0]


def test_clone_lists_the_tree_and_inlines_the_readme(origin: Path, workspace: Path, ctx_settings: Settings) -> None:
    doc = _load(origin.as_uri(), workspace, ctx_settings)
    repo_dir = ctx_of(workspace) / doc.info["repo_path"]

    assert doc.info["repo_path"].startswith("repos/demo-project-")
    assert (repo_dir / "src" / "app.py").read_text() == "print('hello')\n"
    assert not (repo_dir / "feature.txt").exists()
    assert doc.info["commit"] == _git(origin, "rev-parse", "main").strip()
    assert doc.info["clone_reused"] is False and doc.info["files"] == 3
    assert "src/app.py" in doc.text and "README.md" in doc.text
    assert "--- README.md ---\n# Demo" in doc.text
    assert f"{doc.info['repo_path']}/" in doc.text
    assert "print('hello')" not in doc.text  # files stay in the workspace, not inlined


def test_symlinks_are_checked_out_as_plain_files(origin: Path, workspace: Path, ctx_settings: Settings) -> None:
    doc = _load(origin.as_uri(), workspace, ctx_settings)
    link = ctx_of(workspace) / doc.info["repo_path"] / "passwd-link"
    assert not link.is_symlink()
    assert link.read_text() == "/etc/passwd"


def test_same_url_and_ref_reuse_the_clone(origin: Path, workspace: Path, ctx_settings: Settings) -> None:
    first = _load(origin.as_uri(), workspace, ctx_settings)
    (origin / "later.txt").write_text("new\n")
    _git(origin, "add", "-A")
    _git(origin, "commit", "-qm", "later")

    second = _load(origin.as_uri(), workspace, ctx_settings)

    assert second.info["clone_reused"] is True
    assert second.info["repo_path"] == first.info["repo_path"]
    assert second.info["commit"] == first.info["commit"]
    assert second.path == first.path
    assert len(list((ctx_of(workspace) / "repos").iterdir())) == 1


@pytest.mark.parametrize("ref", ["feature", "v1"])
def test_branch_and_tag_refs(origin: Path, workspace: Path, ctx_settings: Settings, ref: str) -> None:
    doc = _load(origin.as_uri(), workspace, ctx_settings, ref=ref)
    has_feature = (ctx_of(workspace) / doc.info["repo_path"] / "feature.txt").exists()
    assert has_feature == (ref == "feature")
    assert doc.info["ref"] == ref and f"Ref: {ref}" in doc.text


def test_commit_sha_ref(origin: Path, workspace: Path, ctx_settings: Settings) -> None:
    sha = _git(origin, "rev-parse", "feature").strip()
    doc = _load(origin.as_uri(), workspace, ctx_settings, ref=sha)
    assert doc.info["commit"] == sha
    assert (ctx_of(workspace) / doc.info["repo_path"] / "feature.txt").exists()


@pytest.mark.parametrize("ref", ["no-such-branch", "--upload-pack=touch /tmp/x", "a..b"])
def test_bad_refs_fail(origin: Path, workspace: Path, ctx_settings: Settings, ref: str) -> None:
    with pytest.raises(FleetError) as caught:
        _load(origin.as_uri(), workspace, ctx_settings, ref=ref)
    assert caught.value.code == "context_repo_failed"
    assert not any((ctx_of(workspace) / "repos").glob("*"))


def test_missing_repository_fails(tmp_path: Path, workspace: Path, ctx_settings: Settings) -> None:
    with pytest.raises(FleetError) as caught:
        _load((tmp_path / "nothing-here").as_uri(), workspace, ctx_settings)
    assert caught.value.code == "context_repo_failed"
    assert caught.value.message.startswith("git failed:")


@pytest.mark.parametrize(
    "url",
    [
        "ssh://git@example.org/x.git",
        "git@example.org:x.git",
        "ext::sh -c touch% /tmp/pwned",
        "git://example.org/x.git",
        "http://example.org/x.git",
        "/srv/repos/x",
        "https://127.0.0.1/x.git",
    ],
)
def test_refused_repository_urls(workspace: Path, ctx_settings: Settings, tmp_path: Path, url: str) -> None:
    settings = make_settings(tmp_path)  # https to loopback is blocked only without url_allow_private
    with pytest.raises(FleetError) as caught:
        _load(url, workspace, settings)
    assert caught.value.code == "context_repo_blocked"  # a repository refusal has the repository code
    assert caught.value.action


def test_file_urls_need_allow_private(origin: Path, workspace: Path, tmp_path: Path) -> None:
    with pytest.raises(FleetError) as caught:
        _load(origin.as_uri(), workspace, make_settings(tmp_path))
    assert caught.value.code == "context_repo_blocked"


def test_too_large_clone_is_removed(origin: Path, workspace: Path, ctx_settings: Settings) -> None:
    with pytest.raises(FleetError) as caught:
        _load(origin.as_uri(), workspace, ctx_settings, repo_max_bytes=1000)
    assert caught.value.code == "context_too_large"
    assert list((ctx_of(workspace) / "repos").iterdir()) == []


def test_readme_and_listing_are_bounded(origin: Path, workspace: Path, ctx_settings: Settings) -> None:
    doc = _load(origin.as_uri(), workspace, ctx_settings, readme_max_chars=5, listing_max_entries=1)
    assert doc.truncated is True
    assert "--- README.md ---\n# Dem\n" in doc.text
    assert "... 2 more files not listed" in doc.text


def _run_limited(tmp_path: Path, script: str, *, timeout_s: float = 30.0, cancel: CancelToken | None = None) -> str:
    """Drive the clone runner's limits with a real process standing in for a slow or growing git."""
    watch = tmp_path / "clone"
    watch.mkdir()
    with pytest.raises(FleetError) as caught:
        _run(
            ["sh", "-c", script.replace("DIR", str(watch)), "url", "dest"],
            url="https://example.org/x.git",
            env={"PATH": os.environ["PATH"]},
            deadline=time.monotonic() + timeout_s,
            timeout_s=timeout_s,
            cancel=cancel,
            watch=watch,
            max_bytes=100_000,
        )
    return caught.value.code


def test_clone_time_limit_kills_git(tmp_path: Path) -> None:
    assert _run_limited(tmp_path, "sleep 30", timeout_s=0.3) == "context_repo_failed"


def test_clone_growing_past_the_size_limit_is_stopped(tmp_path: Path) -> None:
    assert _run_limited(tmp_path, "head -c 500000 /dev/zero > DIR/blob; sleep 30") == "context_too_large"


def test_cancel_stops_a_clone(tmp_path: Path) -> None:
    cancel = CancelToken()
    cancel.cancel()
    assert _run_limited(tmp_path, "sleep 30", cancel=cancel) == "context_cancelled"
