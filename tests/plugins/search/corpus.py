"""The grep parity corpus (search.md §6.1), generated into a directory on demand.

It is generated rather than checked in because git would apply the corpus's
own ``.gitignore`` files and line-ending rules to it. Everything here is
deterministic: the same bytes every run.
"""

from __future__ import annotations

import os
from pathlib import Path

LONG_LINE = "x" * 290 + " needle " + "y" * 302  # 600 characters

FILES: dict[str, bytes] = {
    ".gitignore": b"*.log\nbuild/\n/secret.txt\nignored_dir/\n!ignored_dir/keep.txt\n",
    ".env": b"needle in a hidden file\n",
    ".hidden/x.txt": b"needle in a hidden dir\n",
    "B.txt": b"needle in capital B\n",
    "a.txt": b"needle one\nplain line\nNeedle two\nNEEDLE three\n",
    "a/b.txt": b"alpha\nneedle nested\nomega\n",
    "a.log": b"needle in an ignored log\n",
    "build/x.txt": b"needle in an ignored dir\n",
    "secret.txt": b"needle anchored ignore\n",
    "deeper/secret.txt": b"needle not anchored here\n",
    "ignored_dir/keep.txt": b"needle cannot be re-included\n",
    "sub/.gitignore": b"!keep.log\n*.tmp\n",
    "sub/keep.log": b"needle kept by negation\n",
    "sub/b.log": b"needle still ignored\n",
    "sub/x.tmp": b"needle tmp\n",
    "sub/deep/.gitignore": b"!*.tmp\n",
    "sub/deep/y.tmp": b"needle deep tmp re-included\n",
    "sub/deep/z.py": b"def needle():\n    return 'needle'\n",
    "node_modules/m.js": b"const needle = 1;\n",
    "src/node_modules/x.js": b"needle vendored\n",
    "src/__pycache__/c.txt": b"needle cached\n",
    "src/app.py": (b"import os\n\n\nclass Needle:\n    def find(self, needle):\n"
                   b"        return needle\n\n\ndef main():\n    print('no needle')\n"),
    "src/lib/util.ts": b"export function needle(): number {\n  return 1;\n}\n",
    "src/lib/util.go": b"package lib\n\nfunc Needle() int { return 1 }\n",
    "bin.dat": b"needle\x00binary\x01\x02" + bytes(range(256)) * 8,
    "crlf.txt": b"first needle\r\nsecond\r\nthird needle\r\nneedle\r\n",
    "bom.txt": b"\xef\xbb\xbfneedle after a BOM\nplain\n",
    "utf16.txt": "needle in utf-16\nsecond line\n".encode("utf-16"),
    "latin1.txt": b"caf\xe9 needle latin-1\nplain\n",
    "unicode.txt": ("naïve needle — ünïcödé\nΣίσυφος needle\n日本語 needle 🎉\n"
                    "İstanbul NEEDLE\n").encode(),
    "long.txt": (LONG_LINE + "\nshort needle\n").encode(),
    "zmany.txt": "".join(f"needle {i}\n" if i % 2 else f"other {i}\n"
                        for i in range(520)).encode(),
    "empty.txt": b"",
    "noeol.txt": b"needle without newline",
}


def build(root: Path) -> Path:
    """Write the corpus into ``root`` (which must be empty) and return it."""
    for rel, data in FILES.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    os.symlink("a.txt", root / "link.txt")
    os.symlink("sub", root / "linkdir")
    return root
