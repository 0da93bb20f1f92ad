"""The ``command`` permission subject kind: how ``Bash(...)`` rules judge a command line.

`COMMAND` is what the shell plugin gives ``Registry.add_subject_kind`` at boot (a plugin
with a shell tool of its own registers the same value). A rule's spec is a command
prefix: ``cmd:*`` matches at a word boundary, ``*`` matches any run; it is applied to
every command `analyze_command` finds in the line (`parts`). A command whose tail is
completed at run time fires every rule it `could_grow_into`; the files the line writes
by redirection are parts that ``Edit`` rules judge. `readonly_command` is the kind's
read-only verdict (what a strictly read-only subagent may run).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from callgate.permissions import SubjectKind, SubjectPart


def _analyzer() -> Any:
    """The command-line analysis (`_analyze`), imported when a rule or a call first needs it:
    registering the ``command`` subject kind imports neither it nor its tables (issue 38)."""
    from . import _analyze

    return _analyze


@functools.lru_cache(maxsize=4096)
def parts(text: str, dialect: str) -> tuple[SubjectPart, ...]:
    """The commands the line would run, then the files it writes by redirection (cached,
    like the analysis: a model re-runs the same lines)."""
    line = _analyzer().analyze_command(text, dialect)
    found = [SubjectPart(c.text, c.forms or (c.text,), c.allow_forms or (c.text,),
                         c.undecidable, c.open_tail) for c in line.commands]
    for redirection in line.writes:
        if redirection.target is None:
            found.append(SubjectPart(redirection.text, undecidable="the redirection target "
                                     "is computed at run time", writes=True))
        else:
            found.append(SubjectPart(redirection.target, writes=True))
    return tuple(found)


def _star_regex(pattern: str) -> str:
    """``*`` matches any run; everything else is literal."""
    return ".*".join(re.escape(part) for part in pattern.split("*"))


def matcher(spec: str) -> Callable[[str], bool]:
    """The predicate of a command spec; `ValueError` says what is malformed."""
    text = _analyzer().normalize(spec)
    if ":*" in text[:-2]:
        raise ValueError(":* is only allowed at the end of a command spec")
    if text.endswith(":*"):
        prefix = text[:-2].rstrip()
        if not prefix:
            raise ValueError("the command prefix before :* is empty; write the tool or "
                             "group name alone to match every command")
        regex = re.compile(_star_regex(prefix) + r"(?: .*)?", re.DOTALL)
    else:
        regex = re.compile(_star_regex(text), re.DOTALL)
    return lambda value: regex.fullmatch(value) is not None


def could_grow_into(spec: str, form: str) -> bool:
    """Whether words appended to the command ``form`` could make it match the command
    spec ``spec`` (for a command whose tail is filled in at run time)."""
    text = _analyzer().normalize(spec)
    if text.endswith(":*"):
        text = text[:-2].rstrip()
    head, star, _rest = text.partition("*")
    if star:  # a wildcard in the spec: anything that agrees with its literal start may grow
        return head.startswith(form + " ") or (form + " ").startswith(head) or \
            head.startswith(form)
    return text.startswith(form + " ")


def suggest(label: str) -> str:
    """The spec of the allow rule a "no approver" refusal suggests for a command."""
    return f"{_analyzer().suggested_prefix(label)}:*"


def claims(spec: str) -> bool:
    """A spec of a rule naming a tool not loaded here reads as a command when it ends ``:*``."""
    return spec.endswith(":*")


def read_only(text: str, dialect: str) -> str | None:
    """`readonly_command`, imported when a read-only child first runs a command (its
    tables cost the boot of every host nothing)."""
    from . import _readonly

    return _readonly.readonly_command(text, dialect)


COMMAND = SubjectKind("command", parts, matcher, could_grow_into=could_grow_into,
                      suggest=suggest, claims=claims, read_only=read_only)

__all__ = ["COMMAND", "claims", "could_grow_into", "matcher", "parts", "read_only", "suggest"]
