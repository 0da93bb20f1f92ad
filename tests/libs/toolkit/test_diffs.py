"""Change diffs (files.md §7), directly."""

from __future__ import annotations

import difflib
import random

from callgate_toolkit.diffs import change_diff


def _apply(old: str, diff: str) -> list[str]:
    """Apply a unified diff to ``old``'s lines, checking every context and removed line."""
    lines = old.splitlines()
    out: list[str] = []
    pos = 0
    for row in diff.split("\n")[2:]:
        if row.startswith("@@"):
            start = int(row.split()[1][1:].split(",")[0])
            count = row.split()[1].split(",")
            begin = start - 1 if len(count) == 1 or count[1] != "0" else start
            out.extend(lines[pos:begin])
            pos = begin
        elif row.startswith("+"):
            out.append(row[1:])
        else:
            assert lines[pos] == row[1:], (pos, row)
            if row.startswith(" "):
                out.append(row[1:])
            pos += 1
    return out + lines[pos:]


def test_diffs_apply_with_and_without_the_span_shortcut():
    rng = random.Random(7)
    words = ["alpha", "beta", "gamma", "", "delta"]
    for _ in range(300):
        old = "".join(rng.choice(words) + "\n" for _ in range(rng.randint(1, 30)))
        i = rng.randint(0, len(old))
        j = rng.randint(i, min(len(old), i + 20))
        insert = rng.choice(["", "X", "new line\n", "a\nb\n"])
        new = old[:i] + insert + old[j:]
        if old.splitlines() == new.splitlines():
            continue
        for d in (change_diff(old, new, "f.txt"),
                  change_diff(old, new, "f.txt", span=(i, j, i + len(insert)))):
            assert d.text.startswith("--- a/f.txt\n+++ b/f.txt\n@@ ")
            assert _apply(old, d.text) == new.splitlines(), (old, new, d.text)
            rows = d.text.split("\n")[2:]
            assert d.added == sum(r.startswith("+") for r in rows)
            assert d.removed == sum(r.startswith("-") for r in rows)


def test_a_one_line_change_matches_difflib():
    old = "".join(f"line{i}\n" for i in range(1, 21))
    new = old.replace("line10\n", "LINE10\n")
    expected = "\n".join(difflib.unified_diff(old.splitlines(), new.splitlines(), "a/a.txt",
                                               "b/a.txt", lineterm=""))
    assert change_diff(old, new, "a.txt").text == expected


def test_creates_big_changes_and_output_cuts():
    d = change_diff(None, "a\nb\n", "n.txt")
    assert d.text == "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b" and d.added == 2
    big = change_diff("x\n", "".join(f"{i}\n" for i in range(2001)), "b.txt")
    assert big.text == "(diff omitted: change too large to show; +2001/-1 lines)"
    long = change_diff("x\n", "".join(f"line {i}\n" for i in range(900)), "l.txt")
    out = long.for_output()
    assert out.endswith("… (diff truncated; +900/-1 lines in total)") and len(out) < 4200
    assert "\r" not in change_diff("a\r\nb\r\n", "a\r\nc\r\n", "c.txt").text
