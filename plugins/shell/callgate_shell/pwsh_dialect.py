"""PowerShell specifics (shell.md §3): the dialect of an executable, the 5.1 chain-operator
check, the script wrapper and the argv, including ``-EncodedCommand`` for long scripts.

Pure functions, so they are tested on machines without PowerShell.
"""

from __future__ import annotations

import base64
import ntpath

ENCODE_ABOVE = 8000  # UTF-8 bytes; a longer script goes as -EncodedCommand
FLAGS = ("-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass", "-NoLogo")
CHAIN_MESSAGE = ("Windows PowerShell 5.1 does not parse '&&' or '||'; use ';' and "
                 "'if ($?) { ... }', or separate calls")

# UTF-8 without a byte-order mark, in syntax both 5.1 and 7 accept
PRELUDE = (
    "[Console]::OutputEncoding = New-Object System.Text.UTF8Encoding $false\n"
    "$OutputEncoding = New-Object System.Text.UTF8Encoding $false\n"
    "$ProgressPreference = 'SilentlyContinue'\n"
)

_SINGLE = "'\u2018\u2019\u201a\u201b"
_DOUBLE = '"\u201c\u201d\u201e'


def is_windows_powershell(executable: str) -> bool:
    """``powershell`` (any case, with or without ``.exe``, any directory) is 5.1; else 7+."""
    name = ntpath.basename(executable).lower()
    if name.endswith(".exe"):
        name = name[:-4]
    return name == "powershell"


def build_script(command: str) -> str:
    """The command inside UTF-8 output settings and a try/catch; exits with ``$LASTEXITCODE``."""
    return (
        f"{PRELUDE}"
        "try {\n"
        f"{command}\n"
        "} catch {\n"
        "    Write-Error -ErrorRecord $_ -ErrorAction Continue\n"
        "    exit 1\n"
        "}\n"
        "if ($null -ne $LASTEXITCODE) { exit $LASTEXITCODE }\n"
        "exit 0\n"
    )


def build_argv(executable: str, script: str) -> list[str]:
    """``[exe, flags..., -Command, script]``, or ``-EncodedCommand`` base64(UTF-16LE) above
    `ENCODE_ABOVE` UTF-8 bytes (Windows limits a command line to 32767 characters)."""
    if len(script.encode("utf-8")) > ENCODE_ABOVE:
        encoded = base64.b64encode(script.encode("utf-16-le")).decode("ascii")
        return [executable, *FLAGS, "-EncodedCommand", encoded]
    return [executable, *FLAGS, "-Command", script]


def _skip_quoted(text: str, i: int) -> int:
    """The index after the quoted string that starts at ``text[i]``."""
    n = len(text)
    double = text[i] in _DOUBLE
    quotes = _DOUBLE if double else _SINGLE
    i += 1
    while i < n:
        c = text[i]
        if double and c == "`":
            i += 2
            continue
        if c in quotes:
            if i + 1 < n and text[i + 1] in quotes:  # '' or "" inside the string
                i += 2
                continue
            return i + 1
        i += 1
    return n


def _skip_here_string(text: str, i: int) -> int | None:
    """For ``@'`` / ``@"`` followed by a line end: the index after the closing ``'@``/``"@``."""
    quote = text[i + 1]
    j = i + 2
    while j < len(text) and text[j] in " \t":
        j += 1
    if j >= len(text) or text[j] not in "\r\n":
        return None
    end = text.find(f"\n{quote}@", j)
    return len(text) if end < 0 else end + 3


def find_chain_operator(command: str) -> str | None:
    """The first ``&&`` or ``||`` outside quotes, here-strings and comments, or ``None``."""
    i, n = 0, len(command)
    while i < n:
        c = command[i]
        if c in _SINGLE or c in _DOUBLE:
            i = _skip_quoted(command, i)
            continue
        if c == "`":  # escapes the next character
            i += 2
            continue
        if c == "@" and i + 1 < n and command[i + 1] in "'\"":
            after = _skip_here_string(command, i)
            if after is not None:
                i = after
                continue
        if c == "<" and command.startswith("<#", i):
            end = command.find("#>", i + 2)
            i = n if end < 0 else end + 2
            continue
        if c == "#" and (i == 0 or command[i - 1] in " \t\r\n;{}()|"):
            end = command.find("\n", i)
            i = n if end < 0 else end
            continue
        if command.startswith("&&", i) or command.startswith("||", i):
            return command[i:i + 2]
        i += 1
    return None
