"""The web view's reading of a unified diff: files, hunks, numbers, and the line budget."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from orchestra_adapters.server.diff_text import file_from_diff, parse_diff

DIFF = """diff --git a/app.py b/app.py
index 1111111..2222222 100644
--- a/app.py
+++ b/app.py
@@ -1,3 +1,3 @@
 def answer():
-    return 41
+    return 42
 # end
diff --git a/new file.txt b/new file.txt
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/new file.txt\t
@@ -0,0 +1,2 @@
+one
+two
\\ No newline at end of file
diff --git a/logo.png b/logo.png
deleted file mode 100644
index 4444444..0000000
Binary files a/logo.png and /dev/null differ
"""


def test_files_hunks_and_line_numbers() -> None:
    changed, added, deleted = parse_diff(DIFF, 100)
    assert (changed.path, changed.status, changed.additions, changed.deletions) == ("app.py", "modified", 1, 1)
    assert changed.lines == [
        ["@", None, None, "@@ -1,3 +1,3 @@"], [" ", 1, 1, "def answer():"], ["-", 2, None, "    return 41"],
        ["+", None, 2, "    return 42"], [" ", 3, 3, "# end"],
    ]
    assert (added.path, added.status, added.additions) == ("new file.txt", "added", 2)
    assert added.lines[-1][0] == "\\"
    assert (deleted.path, deleted.status, deleted.binary, deleted.lines) == ("logo.png", "deleted", True, [])


def test_past_the_budget_files_are_listed_with_their_counts_and_cut() -> None:
    changed, added, _ = parse_diff(DIFF, 3)
    assert len(changed.lines) == 3 and changed.truncated and changed.total_lines == 5
    assert added.lines == [] and added.truncated and added.additions == 2


@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=20), max_size=40),
       st.integers(min_value=0, max_value=60))
def test_a_budget_keeps_a_prefix_of_the_lines_and_every_count(lines: list[str], budget: int) -> None:
    text = "diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n" + "".join(f"+{line}\n" for line in lines)
    [whole] = parse_diff(text, 10_000)
    [cut] = parse_diff(text, budget)
    assert cut.lines == whole.lines[:budget] and cut.additions == whole.additions == len(lines)
    assert cut.truncated == (whole.total_lines > budget)
    assert file_from_diff(text) == "".join(f"{line}\n" for line in lines)
