"""Folder walks and symlinks: links leaving the folder are skipped unless asked, loops end."""

from __future__ import annotations

import os
import threading

from kgrag.ingest.loaders import load_paths
from kgrag.ingest.options import LoadOptions

FOLLOW = LoadOptions(follow_symlinks=True)


def _tree(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "a.txt").write_text("inside a")
    (root / "sub" / "b.txt").write_text("inside b")
    (outside / "secret.txt").write_text("outside secret")
    return root, outside


def _names(report):
    return sorted(os.path.basename(d.file_path) for d in report.documents)


def test_file_symlink_leaving_the_folder_is_skipped_with_a_reason(tmp_path):
    root, outside = _tree(tmp_path)
    (root / "link.txt").symlink_to(outside / "secret.txt")
    report = load_paths([root])
    assert _names(report) == ["a.txt", "b.txt"]
    [error] = report.errors
    assert error.path == str(root / "link.txt")
    assert (
        "outside the folder being indexed" in error.reason and "--follow-symlinks" in error.reason
    )
    assert _names(load_paths([root], FOLLOW)) == ["a.txt", "b.txt", "secret.txt"]


def test_folder_symlink_leaving_the_folder_is_skipped_unless_asked(tmp_path):
    root, outside = _tree(tmp_path)
    (root / "ext").symlink_to(outside, target_is_directory=True)
    report = load_paths([root])
    assert _names(report) == ["a.txt", "b.txt"]
    assert "outside" in report.errors[0].reason
    assert _names(load_paths([root], FOLLOW)) == ["a.txt", "b.txt", "secret.txt"]


def test_symlink_inside_the_folder_loads_the_file_once(tmp_path):
    root, _ = _tree(tmp_path)
    (root / "again.txt").symlink_to(root / "sub" / "b.txt")
    (root / "subdir-link").symlink_to(root / "sub", target_is_directory=True)
    report = load_paths([root])
    assert [d.content for d in report.documents] == ["inside a", "inside b"]
    assert report.errors == []


def test_broken_and_looping_links_are_skipped(tmp_path):
    root, _ = _tree(tmp_path)
    (root / "x.txt").symlink_to(root / "y.txt")
    (root / "y.txt").symlink_to(root / "x.txt")
    (root / "gone.txt").symlink_to(root / "missing.txt")
    report = load_paths([root])
    assert _names(report) == ["a.txt", "b.txt"]
    assert {os.path.basename(e.path) for e in report.errors} == {"x.txt", "y.txt", "gone.txt"}
    assert all("broken symlink or symlink loop" in e.reason for e in report.errors)


def test_folder_loops_never_hang_even_when_following(tmp_path):
    root, outside = _tree(tmp_path)
    (root / "sub" / "up").symlink_to(root, target_is_directory=True)  # inside: quiet
    (root / "ext").symlink_to(outside, target_is_directory=True)
    (outside / "back").symlink_to(root, target_is_directory=True)  # out and back in
    (outside / "self").symlink_to(outside, target_is_directory=True)
    result = {}
    worker = threading.Thread(target=lambda: result.update(r=load_paths([root], FOLLOW)))
    worker.start()
    worker.join(timeout=10)
    assert not worker.is_alive(), "the walk did not end"
    assert _names(result["r"]) == ["a.txt", "b.txt", "secret.txt"]


def test_a_link_named_by_the_caller_is_followed(tmp_path):
    _, outside = _tree(tmp_path)
    (tmp_path / "named.txt").symlink_to(outside / "secret.txt")
    (tmp_path / "named-dir").symlink_to(outside, target_is_directory=True)
    report = load_paths([tmp_path / "named.txt", tmp_path / "named-dir"])
    assert [d.content for d in report.documents] == ["outside secret"]  # same file once
    assert report.errors == []
