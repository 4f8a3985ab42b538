"""Which files of a submission count is decided once (autograder/grading/walk.py): the copy that is graded, the bytes
a cluster is sent and the ledger's digest see exactly the same files, whatever links, hidden files, nested folders,
special files and oversized files the submission holds."""

import hashlib
import os
from pathlib import Path

import pytest

from autograder.grading import course, walk
from autograder.grading.scoring import ledger
from autograder.limits import MAX_FOLDER_BYTES


def _submission(root):
    """A submission with every kind of entry the walker must decide about."""
    folder = root / "ada"
    (folder / "data" / "deeper").mkdir(parents=True)
    (folder / ".hidden_folder").mkdir()
    (folder / "02_forward_pass.ipynb").write_text('{"cells": []}')
    (folder / ".hidden").write_text("a hidden file counts")
    (folder / ".hidden_folder" / "x.txt").write_text("so does a file in a hidden folder")
    (folder / "data" / "w.csv").write_text("1,2\n")
    (folder / "data" / "deeper" / "b.npy").write_bytes(b"\x93NUMPY" + bytes(range(256)))
    (root / "classmate.txt").write_text("a classmate's file")
    (folder / "link_to_file").symlink_to(root / "classmate.txt")
    (folder / "data" / "link_to_folder").symlink_to(root)
    (folder / "dangling").symlink_to(root / "nothing")
    os.mkfifo(folder / "pipe")
    with open(folder / "data" / "huge.bin", "wb") as f:  # sparse: past the limit, without the disk it names
        f.truncate(MAX_FOLDER_BYTES + 1)
    return folder


def _copied(folder, target):
    return {p.relative_to(target).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(target.rglob("*")) if p.is_file()}


def test_the_copy_the_cluster_and_the_ledger_see_the_same_files(tmp_path):
    pytest.importorskip("distributed")
    from autograder.grading.dispatch import cluster

    folder = _submission(tmp_path)
    skipped = course.copy_tree(folder, tmp_path / "copy")
    copied = _copied(folder, tmp_path / "copy")
    digest, listed = ledger.submission_files(folder)
    counted = {Path(rel).as_posix(): sha for rel, sha in listed.items() if not sha.startswith("left out")}
    sent = {rel: hashlib.sha256(data).hexdigest() for rel, data in cluster.submission_files(folder).items()}

    assert copied == counted == sent
    assert set(copied) == {"02_forward_pass.ipynb", ".hidden", ".hidden_folder/x.txt", "data/w.csv",
                           "data/deeper/b.npy"}
    left_out = {Path(rel).as_posix(): why.removeprefix("left out: ") for rel, why in listed.items()
                if why.startswith("left out")}
    assert {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in skipped} == left_out
    assert left_out == {"link_to_file": "a link", "dangling": "a link", "pipe": "not a regular file",
                        "data/link_to_folder": "a link",
                        "data/huge.bin": f"over the size limit ({MAX_FOLDER_BYTES + 1:,} bytes)"}
    assert not any(p.is_symlink() for p in (tmp_path / "copy").rglob("*"))

    # No link is followed: what a link names may change without changing what is graded or its digest ...
    (tmp_path / "classmate.txt").write_text("changed")
    assert ledger.submission_files(folder) == (digest, listed)
    # ... and every file that counts is in the digest, a hidden one as much as any.
    (folder / ".hidden_folder" / "x.txt").write_text("changed")
    assert ledger.submission_files(folder)[0] != digest


def test_the_size_limit_counts_the_files_together_in_one_order(tmp_path):
    """A file past what is left of the limit is left out and the walk goes on: the same files whoever walks."""
    folder = tmp_path / "s"
    (folder / "b").mkdir(parents=True)
    (folder / "a.txt").write_bytes(b"x" * 60)
    (folder / "c.txt").write_bytes(b"x" * 30)
    (folder / "b" / "d.txt").write_bytes(b"x" * 10)
    found = [(f.rel, f.why, f.size) for f in walk.walk(folder, max_bytes=95)]
    assert found == [("a.txt", "", 60), ("c.txt", "", 30), ("b", "", 0),
                     (os.path.join("b", "d.txt"), "over the size limit (10 bytes)", 0)]
    assert course.copy_tree(folder, tmp_path / "copy", 95) == [f"{os.path.join('b', 'd.txt')}: over the size limit "
                                                                "(10 bytes)"]
    assert sorted(p.name for p in (tmp_path / "copy").rglob("*")) == ["a.txt", "b", "c.txt"]


def test_a_file_that_grows_while_read_gives_the_size_it_had_when_opened(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"1234")
    found = walk.open_file(path, "f", 100)
    with open(path, "ab") as f:
        f.write(b"5678")
    assert b"".join(found.chunks()) == b"1234"
    found.close()


def test_a_folder_swapped_for_a_link_during_the_walk_is_not_followed(tmp_path):
    """Between the walker's look at a folder and its entering it, student code could put a link in its place:
    the folder is entered through its parent's descriptor and checked to be the one listed, so nothing of where
    the link leads is read."""
    folder, outside = tmp_path / "s", tmp_path / "outside"
    (folder / "d").mkdir(parents=True)
    (folder / "d" / "own.txt").write_text("the student's")
    outside.mkdir()
    (outside / "secret.txt").write_text("another student's")
    seen = []
    for found in walk.walk(folder):
        seen.append(found.rel)
        if found.rel == "d" and found.folder:  # listed as a folder: now swapped for a link before it is entered
            (folder / "d" / "own.txt").unlink()
            (folder / "d").rmdir()
            (folder / "d").symlink_to(outside)
    assert seen == ["d"]
