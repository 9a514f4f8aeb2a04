"""`sandbox.guestfs` on its own: what it refuses, what it bounds, and that it never follows or blocks."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from fleet_rlm.sandbox import guestfs

pytestmark = pytest.mark.db_independent


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "a" / "b").mkdir(parents=True)
    (workspace / "a" / "b" / "f.txt").write_text("inside")
    (tmp_path / "secret.txt").write_text("outside")
    return workspace


@pytest.mark.parametrize("rel", ["../secret.txt", "a/../../secret.txt", "/etc/passwd", "\\etc", "~/x", "a/\x00", "C:x"])
def test_paths_that_could_leave_are_refused_before_any_lookup(root: Path, rel: str) -> None:
    with pytest.raises(guestfs.GuestPathError) as caught:
        guestfs.read_bytes(root, rel, max_bytes=100)
    assert caught.value.kind == "invalid"


def test_links_anywhere_on_the_path_are_refused_even_inside(root: Path) -> None:
    (root / "up").symlink_to("..")
    (root / "alias.txt").symlink_to("a/b/f.txt")
    (root / "adir").symlink_to("a")
    (root / "loop").symlink_to("loop")
    for rel in ("up/secret.txt", "alias.txt", "adir/b/f.txt", "loop", "loop/x"):
        with pytest.raises(guestfs.GuestPathError) as caught:
            guestfs.read_bytes(root, rel, max_bytes=100)
        assert caught.value.kind == "link", rel
    assert guestfs.read_bytes(root, "./a//b/f.txt", max_bytes=100)[0] == b"inside"
    assert guestfs.kind_of(guestfs.lstat(root, "alias.txt").st_mode) == "symlink"


def test_fifos_sockets_and_devices_are_refused_without_blocking(root: Path) -> None:
    os.mkfifo(root / "pipe")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(root / "sock"))
    try:
        for rel in ("pipe", "sock"):
            for flags in (os.O_RDONLY, os.O_WRONLY | os.O_APPEND):
                with pytest.raises(guestfs.GuestPathError) as caught:
                    os.close(guestfs.open_file(root, rel, flags)[0])
                assert caught.value.kind == "special", (rel, flags)
    finally:
        server.close()
    with pytest.raises(guestfs.GuestPathError) as caught:
        guestfs.open_file(root, "a")
    assert caught.value.kind == "not_file"


def test_writes_create_exclusive_append_and_refuse_hard_links(root: Path, tmp_path: Path) -> None:
    guestfs.make_dirs(root, "new/dir", mode=0o750)
    guestfs.write_bytes(root, "new/dir/x.txt", b"one", exclusive=True, mode=0o640)
    with pytest.raises(guestfs.GuestPathError) as caught:
        guestfs.write_bytes(root, "new/dir/x.txt", b"again", exclusive=True)
    assert caught.value.kind == "exists"
    guestfs.write_bytes(root, "new/dir/x.txt", b"+two", append=True)
    assert (root / "new" / "dir" / "x.txt").read_bytes() == b"one+two"
    assert stat.S_IMODE((root / "new" / "dir" / "x.txt").stat().st_mode) == 0o640
    os.link(tmp_path / "secret.txt", root / "hard.txt")
    with pytest.raises(guestfs.GuestPathError) as caught:
        guestfs.write_bytes(root, "hard.txt", b"overwrite", append=True)
    assert caught.value.kind == "linked" and (tmp_path / "secret.txt").read_text() == "outside"
    (root / "dangling").symlink_to(tmp_path / "created")
    with pytest.raises(guestfs.GuestPathError):
        guestfs.write_bytes(root, "dangling", b"x")
    (root / "up").symlink_to(tmp_path)
    with pytest.raises(guestfs.GuestPathError):
        guestfs.make_dirs(root, "up/new")
    assert not (tmp_path / "created").exists() and not (tmp_path / "new").exists()


def test_reads_are_bounded_head_or_tail(root: Path) -> None:
    guestfs.write_bytes(root, "big.txt", b"0123456789")
    assert guestfs.read_bytes(root, "big.txt", max_bytes=4)[0] == b"0123"
    data, info = guestfs.read_bytes(root, "big.txt", max_bytes=4, tail=True)
    assert data == b"6789" and info.st_size == 10


def test_walk_never_enters_links_and_is_bounded(root: Path, tmp_path: Path) -> None:
    (root / "a" / "out").symlink_to(tmp_path)
    (root / "a" / "self").symlink_to(".")
    deep = root / "d"
    for level in range(6):
        deep = deep / f"l{level}"
    deep.mkdir(parents=True)
    rels = [entry.rel for entry in guestfs.walk(root)]
    assert "a/out" in rels and "a/self" in rels and not any(r.startswith(("a/out/", "a/self/")) for r in rels)
    assert rels.index("a") < rels.index("d") < rels.index("a/b")  # a directory's entries, then its subdirectories
    assert max(entry.depth for entry in guestfs.walk(root, max_depth=3)) == 3
    assert len(list(guestfs.walk(root, max_entries=4))) == 4
    entries, truncated = guestfs.list_dir(root, "a", limit=1)
    assert len(entries) == 1 and truncated
    kinds = {entry.name: entry.kind for entry in guestfs.list_dir(root, "a")[0]}
    assert kinds == {"b": "dir", "out": "symlink", "self": "symlink"}
