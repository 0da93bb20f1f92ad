"""Splitting a shell command line into the simple commands a permission rule judges.

``Bash(cmd:*)`` rules apply to every segment of a compound command
(host.md §6): ``git status && rm -rf x`` is two commands, and a rule that
allows ``git status`` must not allow the ``rm``. The splitter is quote-aware
(``git commit -m "a && b"`` is one command) and also yields the commands
inside ``$(...)``, ``<(...)``, ``>(...)`` and backticks, because those run too.

It is a conservative tokenizer, not a shell: it errs towards more segments,
never fewer, so a deny rule sees every command a shell could run.
"""

from __future__ import annotations

import functools
import re

#: Separators between simple commands (host.md §6 names ``&&``, ``||``, ``;``, ``|``;
#: a newline and a background ``&`` separate commands in a shell too).
_WS = re.compile(r"\s+")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: Words that may stand before the real command without being it: shell keywords,
#: grouping, and wrappers that run their arguments as a command.
_LEADERS = frozenset({
    "!", "{", "}", "(", ")", "if", "then", "else", "elif", "fi", "do", "done", "while",
    "until", "time", "sudo", "env", "command", "builtin", "exec", "nohup", "nice", "&", ".",
})


def normalize(segment: str) -> str:
    """One space between words, none at the ends (how rules and segments are compared)."""
    return _WS.sub(" ", segment).strip()


#: Without quotes, escapes, substitutions or redirections, separators are all there is.
_PLAIN = re.compile(r"^[^'\"`\\$<>]*$")
_PLAIN_SEPARATORS = {"posix": re.compile(r"&&|\|\||\|&|[;|&\n\r()]"),
                     "pwsh": re.compile(r"&&|\|\||[;|\n\r()]")}


@functools.lru_cache(maxsize=4096)
def _split_cached(text: str, flavor: str) -> tuple[str, ...]:
    if _PLAIN.match(text):
        parts = (normalize(p) for p in _PLAIN_SEPARATORS[flavor].split(text))
        return tuple(p for p in parts if p)
    segments: list[str] = []
    _split(text, flavor, segments, depth=0)
    return tuple(segments)


def split_command(text: str, flavor: str = "posix") -> list[str]:
    """The simple commands of ``text``, normalized, in order (substitutions after their host).

    ``flavor`` is ``"posix"`` (backslash escapes, backtick substitution) or
    ``"pwsh"`` (backtick escapes; ``&`` is the call operator, not a separator).
    """
    return list(_split_cached(text, "pwsh" if flavor == "pwsh" else "posix"))


def _closing(text: str, start: int) -> int:
    """Index of the ``)`` closing the group whose ``(`` is at ``start - 1`` (or len(text))."""
    depth, i, quote = 1, start, None
    while i < len(text):
        c = text[i]
        if quote:
            if c == quote:
                quote = None
            elif c == "\\" and quote == '"':
                i += 1
        elif c == "\\":
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


def _split(text: str, flavor: str, out: list[str], depth: int) -> None:
    posix = flavor != "pwsh"
    escape = "\\" if posix else "`"
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
        if c == escape:
            buf.append(text[i:i + 2])
            i += 2
            continue
        # substitutions run commands of their own, quoted ("$(...)") or not
        if c in "$<>" and text.startswith("(", i + 1) and depth < 8:
            end = _closing(text, i + 2)
            _split(text[i + 2:end], flavor, inner, depth + 1)
            buf.append(text[i:end + 1])
            i = end + 1
            continue
        if c == "`" and posix and depth < 8:
            end = text.find("`", i + 1)
            end = n if end < 0 else end
            _split(text[i + 1:end], flavor, inner, depth + 1)
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
        if c in ";\n\r()":
            flush()
            i += 1
            continue
        if c == "|":
            flush()
            i += 2 if text.startswith("|&", i) else 1
            continue
        if c == "&" and posix:
            previous = text[i - 1] if i else ""
            following = text[i + 1] if i + 1 < n else ""
            if previous in "<>" or following == ">":
                buf.append(c)  # a redirection: 2>&1, &>file
            else:
                flush()  # a background command ends here
            i += 1
            continue
        buf.append(c)
        i += 1
    flush()


@functools.lru_cache(maxsize=4096)
def deny_variants(segment: str) -> tuple[str, ...]:
    """Forms of one segment a deny or ask rule is also matched against.

    A shell runs ``FOO=1 sudo /bin/rm -rf x`` and ``'rm' -rf x`` as ``rm``, so a
    rule ``Bash(rm -rf:*)`` is checked against the segment as written, without
    its leading assignments and wrappers, with the command's directory dropped,
    and with quotes and escapes removed. Allow rules see only the form as written.
    """
    forms = [segment]
    dequoted = normalize(re.sub(r"[\"'\\`]", "", segment))
    for base in (segment, dequoted):
        words = base.split(" ")
        k = 0
        while k < len(words) - 1 and (words[k] in _LEADERS or _ASSIGNMENT.match(words[k])):
            k += 1
        rest = words[k:]
        if rest and "/" in rest[0]:
            rest = [rest[0].rsplit("/", 1)[1], *rest[1:]]
        for form in (base, " ".join(rest)):
            if form and form not in forms:
                forms.append(form)
    return tuple(forms)


#: Programs whose first argument names a subcommand (``git push``), for suggested rules.
_SUBCOMMAND_PROGRAMS = frozenset({
    "git", "npm", "pnpm", "yarn", "bun", "cargo", "go", "docker", "kubectl", "pip", "pip3",
    "uv", "poetry", "make", "gh", "dotnet", "mvn", "gradle", "terraform", "helm", "brew", "apt",
    "apt-get", "systemctl", "conda", "rustup", "deno", "swift", "hatch", "tox", "nox",
})
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9_-]*$")


def suggested_prefix(segment: str) -> str:
    """The command prefix a ``Bash(<prefix>:*)`` rule for this segment would name."""
    words = segment.split(" ")
    if len(words) > 1 and words[0] in _SUBCOMMAND_PROGRAMS and _SUBCOMMAND.match(words[1]):
        return " ".join(words[:2])
    return words[0]
