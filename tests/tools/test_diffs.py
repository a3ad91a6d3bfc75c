"""diffs: unified diff text, hunk boundaries, and applying only some hunks."""

from __future__ import annotations

import difflib
import shutil
import subprocess
from typing import TYPE_CHECKING

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.tools.diffs import apply_hunks, cap_diff, hunks, unified_diff

if TYPE_CHECKING:
    from pathlib import Path

OLD = "".join(f"line {n}\n" for n in range(1, 31))
# Three changes far enough apart (more than 6 lines) to be three hunks.
NEW = OLD.replace("line 2\n", "LINE 2\n").replace("line 15\n", "").replace("line 28\n", "line 28\nextra\n")


def test_unified_diff_has_workspace_relative_headers_and_three_lines_of_context() -> None:
    diff = unified_diff("a\nb\nc\nd\ne\n", "a\nb\nC\nd\ne\n", "src/x.py")
    assert diff == "--- a/src/x.py\n+++ b/src/x.py\n@@ -1,5 +1,5 @@\n a\n b\n-c\n+C\n d\n e\n"


def test_equal_texts_have_no_diff_and_no_hunks() -> None:
    assert unified_diff("same\n", "same\n", "x") == ""
    assert hunks("same\n", "same\n") == []
    assert hunks("", "") == []


def test_created_and_deleted_files_use_dev_null() -> None:
    assert unified_diff("", "new\n", "n.txt", created=True) == "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+new\n"
    assert unified_diff("old\n", "", "o.txt", deleted=True) == "--- a/o.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-old\n"


def test_missing_final_newline_is_marked() -> None:
    diff = unified_diff("a\nb", "a\nc", "f")
    assert (
        diff
        == "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    )


def test_hunks_follow_the_unified_diff_boundaries() -> None:
    found = hunks(OLD, NEW)
    assert len(found) == 3
    diff = unified_diff(OLD, NEW, "f")
    assert [line for line in diff.splitlines() if line.startswith("@@")] == [h.header() for h in found]
    assert [h.index for h in found] == [0, 1, 2]


def test_applying_a_subset_keeps_only_those_changes() -> None:
    assert apply_hunks(OLD, NEW, [0, 2]) == NEW.replace("line 14\nline 16\n", "line 14\nline 15\nline 16\n")
    assert apply_hunks(OLD, NEW, [1]) == OLD.replace("line 15\n", "")
    assert apply_hunks(OLD, NEW, range(3)) == NEW
    assert apply_hunks(OLD, NEW, []) == OLD
    assert apply_hunks(OLD, NEW, [7, -1]) == OLD  # unknown indexes are ignored


def test_lone_carriage_returns_and_form_feeds_survive() -> None:
    old, new = "a\rb\n\x0cc\n", "a\rb\n\x0cC\n"
    assert apply_hunks(old, new, [0]) == new
    assert apply_hunks(old, new, []) == old


def test_cap_diff_cuts_long_diffs_with_a_note() -> None:
    diff = "".join(f"+{n}\n" for n in range(250))
    capped = cap_diff(diff, 200)
    assert capped.count("\n") == 201
    assert capped.endswith("[diff truncated: 50 more lines not shown]\n")
    assert cap_diff("short\n") == "short\n"


def _difflib(old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/f", "b/f", n=3))


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_apply_accepts_the_diff(tmp_path: Path) -> None:
    old, new = "keep\nold\nlast", "keep\nnew\nlast line\n"
    (tmp_path / "f").write_text(old, newline="")
    (tmp_path / "p.diff").write_text(unified_diff(old, new, "f"), newline="")
    subprocess.run(["git", "apply", "p.diff"], cwd=tmp_path, check=True, capture_output=True)
    assert (tmp_path / "f").read_bytes().decode() == new


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "\n", "x y\n"]), max_size=40)


@settings(max_examples=300, deadline=None)
@given(lines, lines, st.sets(st.integers(min_value=0, max_value=12)), st.booleans())
def test_property_all_none_and_subset_then_rest(old_lines, new_lines, subset, cut_newline) -> None:
    old, new = "".join(old_lines), "".join(new_lines)
    if cut_newline:
        new = new.removesuffix("\n")
    count = len(hunks(old, new))
    assert apply_hunks(old, new, range(count)) == new
    assert apply_hunks(old, new, []) == old
    partial = apply_hunks(old, new, subset)
    # Whatever was kept, diffing the remainder and applying all of it converges.
    assert apply_hunks(partial, new, range(len(hunks(partial, new)))) == new
    # Keeping every hunk but none from the subset's complement also converges from the old side.
    rest = [i for i in range(count) if i not in subset]
    assert apply_hunks(apply_hunks(old, new, rest), new, range(len(hunks(apply_hunks(old, new, rest), new)))) == new
    if count and len(rest) == count:
        assert partial == old


@settings(max_examples=200, deadline=None)
@given(lines, lines)
def test_property_same_text_as_difflib_when_lines_end_with_newline(old_lines, new_lines) -> None:
    old, new = "".join(old_lines), "".join(new_lines)
    assert unified_diff(old, new, "f") == _difflib(old, new)


long_lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "}\n"]), min_size=200, max_size=320)


@settings(max_examples=25, deadline=None)
@given(long_lines, long_lines, st.sets(st.integers(min_value=0, max_value=30)))
def test_property_holds_where_difflib_treats_popular_lines_as_junk(old_lines, new_lines, subset) -> None:
    old, new = "".join(old_lines), "".join(new_lines)
    count = len(hunks(old, new))
    assert apply_hunks(old, new, range(count)) == new
    assert apply_hunks(old, new, []) == old
    partial = apply_hunks(old, new, subset)
    assert apply_hunks(partial, new, range(len(hunks(partial, new)))) == new
    assert unified_diff(old, new, "f") == _difflib(old, new)


def test_first_changed_line_is_the_change_not_its_context() -> None:
    from tether.tools.diffs import first_changed_line

    old = "".join(f"line {i}\n" for i in range(1, 11))
    assert first_changed_line(old, old.replace("line 7\n", "line seven\n")) == 7
    assert first_changed_line(old, old.replace("line 7\n", "")) == 7  # a removal: where it was
    assert first_changed_line(None, "new\n") == 1  # a created file
    assert first_changed_line(old, old) is None and first_changed_line(old, None) is None
