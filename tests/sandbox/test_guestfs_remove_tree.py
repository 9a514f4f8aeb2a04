"""`guestfs.remove_tree` removes a guest-written tree and never what its links point at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fleet_rlm.sandbox import guestfs


def test_remove_tree_unlinks_links_and_keeps_their_targets(tmp_path: Path) -> None:
    secret_dir = tmp_path / "host-secrets"
    secret_dir.mkdir()
    (secret_dir / "key").write_text("secret")
    workspaces = tmp_path / "workspaces"
    tree = workspaces / "scratch"
    (tree / "memory" / "deep").mkdir(parents=True)
    (tree / "memory" / "deep" / "notes.md").write_text("x")
    os.symlink(secret_dir, tree / "memory" / "link-to-dir")
    os.symlink(secret_dir / "key", tree / "link-to-file")
    os.mkfifo(tree / "pipe")

    guestfs.remove_tree(workspaces, "scratch")

    assert not tree.exists() and workspaces.is_dir()
    assert (secret_dir / "key").read_text() == "secret"


def test_remove_tree_of_a_link_removes_only_the_link(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("k")
    workspaces = tmp_path / "workspaces"
    workspaces.mkdir()
    os.symlink(target, workspaces / "scratch")
    guestfs.remove_tree(workspaces, "scratch")
    assert (target / "keep").read_text() == "k"


def test_remove_tree_refuses_paths_and_ignores_missing(tmp_path: Path) -> None:
    guestfs.remove_tree(tmp_path, "missing")
    for bad in ("a/b", "..", ""):
        with pytest.raises(ValueError):
            guestfs.remove_tree(tmp_path, bad)
