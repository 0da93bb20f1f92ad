"""grep's ``glob`` argument: a glob that narrows the files searched, or, led by ``!``,
one that leaves files out (issue 36).

A leading ``!`` excludes, as in ripgrep's ``--glob`` (which Claude Code's and Codex's
grep tools pass their glob to): ``!*.min.js`` searches every file but minified
JavaScript. It only ever narrows, like the positive form: nothing hidden, ignored or
pruned comes back. A literal leading ``!`` is written ``\\!``. The ``glob`` tool, which
lists the files a pattern matches, refuses a leading ``!`` instead (`negation_problem`):
"every file but these" is not a search, and a model that sends it meant something else.
"""

from __future__ import annotations

import attrs
from callgate.paths import Glob, GlobError, compile_glob


@attrs.frozen
class FileFilter:
    """A compiled ``glob`` argument: ``matches(rel)`` says whether grep searches ``rel``."""

    glob: Glob
    exclude: bool = False

    @property
    def pattern(self) -> str:
        """The glob without its ``!``."""
        return self.glob.pattern

    @property
    def by_name(self) -> bool:
        return self.glob.by_name

    def matches(self, rel: str) -> bool:
        return self.glob.matches(rel) != self.exclude


def compile_filter(text: str) -> FileFilter:
    """``text`` compiled, or `GlobError` saying what is wrong (``!`` alone, ``!!``...)."""
    if "\x00" in text:  # rg takes the glob as an argument, which cannot hold NUL
        raise GlobError("glob holds a NUL character, which no file name can contain")
    if not text.startswith("!"):
        return FileFilter(compile_glob(text))
    rest = text[1:]
    if not rest:
        raise GlobError("a '!' alone excludes nothing; write '!' and a glob of the files to "
                        "leave out, e.g. !*.min.js")
    if rest.startswith("!"):
        raise GlobError("one leading '!' excludes; '!!' is not a pattern (write \\! for a "
                        "file name that starts with '!')")
    return FileFilter(compile_glob(rest), exclude=True)


def negation_problem(pattern: str) -> str | None:
    """Why the ``glob`` tool refuses ``pattern`` for its leading ``!``, or ``None``."""
    if not pattern.startswith("!"):
        return None
    return ("a leading '!' would exclude files, and glob lists the files a pattern matches; "
            "write a pattern for the files you want (to leave files out of a search, grep's "
            "glob takes !pattern; for a name that starts with '!', write \\!)")
