"""`analyze_command` for PowerShell: a quote-aware splitter that doubts whatever is dynamic.

There is no PowerShell grammar on PyPI that we can rely on, so this splitter
cuts a line at ``;``, ``|``, ``&&``, ``||``, newlines and parentheses
(quote-aware; backtick is the escape), yields the commands inside ``$(...)``
and ``@(...)``, and marks as undecidable every command whose name is not a
plain word (a variable, a call operator ``&`` or dot-sourcing on something
computed, a backtick escape, a wildcard), ``Invoke-Expression`` and its
aliases, ``Start-Process``/``powershell -Command`` with a script, and every
redirection (``>``, ``>>``, ``*>``, ``2>``) to a target other than ``$null``.
"""

from __future__ import annotations

import re

from ._analyze import Command, CommandLine, Redirection, normalize

_RUNS_TEXT = {
    "invoke-expression": "Invoke-Expression runs text as a command",
    "iex": "iex runs text as a command",
    "invoke-command": "Invoke-Command runs a script block",
    "icm": "icm runs a script block",
    "start-process": "Start-Process starts a program named at run time",
    "saps": "saps starts a program named at run time",
    "start": "start starts a program named at run time",
    "set-alias": "an alias can rename any command",
    "new-alias": "an alias can rename any command",
    "sal": "an alias can rename any command",
    "nal": "an alias can rename any command",
    "add-type": "Add-Type compiles and loads code",
}
_SHELLS = frozenset({"pwsh", "pwsh.exe", "powershell", "powershell.exe", "cmd", "cmd.exe"})
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_.\\/:-]+$")
_REDIRECT = re.compile(r"(?<![\w`])(\*|\d)?(>>?)(?:&\d)?\s*('[^']*'|\"[^\"]*\"|[^\s;|&)]*)")


def analyze_pwsh(text: str) -> CommandLine:
    segments: list[str] = []
    _split(text, segments, 0)
    commands: list[Command] = []
    redirections: list[Redirection] = []
    for segment in segments:
        segment, found = _redirections(segment)
        redirections.extend(found)
        if segment:
            commands.append(_judge(segment))
    return CommandLine(text, tuple(commands), tuple(redirections))


def _redirections(segment: str) -> tuple[str, list[Redirection]]:
    found: list[Redirection] = []

    def take(match: re.Match[str]) -> str:
        target = match.group(3)
        if match.group(0).rstrip().endswith(("&1", "&2")) or not target:
            return match.group(0)
        bare = target.strip("'\"")
        if bare.lower() == "$null":
            return ""
        dynamic = "$" in bare or "(" in bare or "`" in bare
        found.append(Redirection(match.group(2), None if dynamic else bare,
                                 normalize(match.group(0)), True))
        return ""

    if ">" not in segment:
        return segment, found
    rest = _REDIRECT.sub(take, segment)
    return normalize(rest), found


def _judge(segment: str) -> Command:
    words = segment.split(" ")
    if words[0] == ".":
        return Command(segment, undecidable=". runs a script's commands in this shell")
    call = words[0] == "&"
    if call and len(words) < 2:
        return Command(segment, undecidable="& without a command")
    head = words[1] if call else words[0]
    bare = head.strip("'\"")
    if "$" in head or "`" in head or "(" in head or "{" in head:
        return Command(segment, undecidable=f"the command name {head} is computed at run time")
    if any(c in bare for c in "*?[") or not _PLAIN_NAME.match(bare):
        return Command(segment, undecidable=f"the command name {head} is a pattern or escape")
    program = re.split(r"[\\/]", bare)[-1].lower()
    if program in _RUNS_TEXT:
        return Command(segment, undecidable=_RUNS_TEXT[program])
    if program in _SHELLS and any(w.lower().lstrip("-/") in (
            "c", "command", "e", "ec", "encodedcommand", "k") for w in words[1:]):
        return Command(segment, undecidable=f"{program} runs a script given as text")
    argv = tuple(w.strip("'\"") for w in (words[1:] if call else words))
    plain = " ".join(argv)
    based = " ".join((program, *argv[1:]))
    forms = tuple(dict.fromkeys(f for f in (segment, plain, based) if f))
    return Command(segment, argv, forms, tuple(dict.fromkeys((segment, plain))))


def _closing(text: str, start: int) -> int:
    """Index of the ``)`` closing the group whose ``(`` is at ``start - 1`` (or len(text))."""
    depth, i, quote = 1, start, None
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = None
        elif c == "`":
            i += 1
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return len(text)


def _split(text: str, out: list[str], depth: int) -> None:
    buf: list[str] = []
    inner: list[str] = []
    quote: str | None = None
    i, n = 0, len(text)

    def flush() -> None:
        segment = normalize("".join(buf))
        if segment:
            out.append(segment)
        buf.clear()
        out.extend(inner)
        inner.clear()

    while i < n:
        c = text[i]
        if quote == "'":
            buf.append(c)
            if c == "'":
                quote = None
            i += 1
            continue
        if c == "`":
            buf.append(text[i:i + 2])
            i += 2
            continue
        if c in "$@" and text.startswith("(", i + 1) and depth < 8:
            end = _closing(text, i + 2)
            _split(text[i + 2:end], inner, depth + 1)
            buf.append(text[i:end + 1])
            i = end + 1
            continue
        if c == "{" and quote is None and depth < 8:  # a script block runs too
            end = text.find("}", i + 1)
            end = n if end < 0 else end
            _split(text[i + 1:end], inner, depth + 1)
            buf.append(text[i:end + 1])
            i = end + 1
            continue
        if quote == '"':
            buf.append(c)
            if c == '"':
                quote = None
            i += 1
            continue
        if c in "'\"":
            quote = c
            buf.append(c)
            i += 1
            continue
        if text.startswith(("&&", "||"), i):
            flush()
            i += 2
            continue
        if c in ";\n\r()|":
            flush()
            i += 1
            continue
        buf.append(c)
        i += 1
    flush()
