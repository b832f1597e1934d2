"""Diffs as a person reads them: numbered unified diffs and change counts.

One home for the edit, write and notebook tools (their results and their previews), so a
change looks the same whichever tool makes it.
"""

from __future__ import annotations

import difflib

__all__ = ["MAX_DIFF_LINES", "PREVIEW_DIFF_LINES", "change_counts", "render_diff"]

# Longest diff shown in a result; the file itself is always fully edited.
MAX_DIFF_LINES = 40
# Longest diff a preview carries (a person reviews it in a scrolling box before approving).
PREVIEW_DIFF_LINES = 2000


def render_diff(before: str, after: str, context: int = 2, max_lines: int = MAX_DIFF_LINES) -> str:
    """A compact unified diff with a line number on every line::

    @@ -2,3 +2,4 @@
         2 | header
    -    3 | old line
    +    3 | new line
    +    4 | added line
         5 | footer
    """
    old_lines = [line.removesuffix("\r") for line in before.split("\n")]
    new_lines = [line.removesuffix("\r") for line in after.split("\n")]
    if before.endswith("\n") and after.endswith("\n"):
        # both end with a newline: the empty "line" after it is not a line of the file
        old_lines.pop()
        new_lines.pop()
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        out.append(f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                out += [f" {b1 + k + 1:>5} | {new_lines[b1 + k]}" for k in range(b2 - b1)]
                continue
            if tag in ("replace", "delete"):
                out += [f"-{a + 1:>5} | {old_lines[a]}" for a in range(a1, a2)]
            if tag in ("replace", "insert"):
                out += [f"+{b + 1:>5} | {new_lines[b]}" for b in range(b1, b2)]
    if len(out) > max_lines:
        hidden = len(out) - max_lines
        out = out[:max_lines] + [f"… ({hidden} more diff lines)"]
    return "\n".join(out)


def change_counts(before: str, after: str) -> tuple[int, int]:
    """``(removed, added)`` lines between two texts."""
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines(), autojunk=False)
    removed = added = 0
    for tag, a1, a2, b1, b2 in matcher.get_opcodes():
        if tag != "equal":
            removed += a2 - a1
            added += b2 - b1
    return removed, added
