"""Codex execpolicy ``.rules`` files, read without executing Starlark.

A rules file is Starlark; the part Codex documents is a list of calls,
``prefix_rule(pattern, decision, justification, match, not_match)`` and
``host_executable(name, paths)``, whose arguments are literals. Python's own parser reads that
subset exactly (Starlark's expression syntax is Python's), so each file is parsed with `ast`
and only literal calls to those two functions are taken, their arguments evaluated with
`ast.literal_eval` (which evaluates literals and nothing else). Anything else in the file (a
``load``, an assignment, a loop, a call to anything, a non-literal argument) is a `Note`
naming its line: callgate never runs it.

`codex_matches` is Codex's own matching (a rule matches when its pattern is a prefix of the
command's words, each pattern element a word or a list of alternatives): the examples are
checked with it first (a failing one is the file's error, as Codex refuses to load it), then
against the rule callgate imports (`claude_rules.translate_codex`).
"""

from __future__ import annotations

import ast
import glob
import os
import shlex
from collections.abc import Sequence
from typing import Any

from ._sources import Found, ImportedRule, Note, Origin

DECISIONS = {"allow": "allow", "prompt": "ask", "forbidden": "deny"}
_PREFIX_ARGS = ("pattern", "decision", "justification", "match", "not_match")


class ExampleError(Exception):
    """A rule's own ``match``/``not_match`` example fails under Codex's semantics."""

    def __init__(self, origin: Origin, message: str) -> None:
        super().__init__(f"{origin}: {message}")
        self.origin = origin


def tokens(example: Any) -> list[str] | None:
    """An example's words: a list of strings as given, a string split as a shell would
    (Codex uses shlex)."""
    if isinstance(example, str):
        try:
            return shlex.split(example)
        except ValueError:
            return None
    if isinstance(example, list | tuple) and all(isinstance(t, str) for t in example):
        return list(example)
    return None


def codex_matches(pattern: Sequence[Any], words: Sequence[str]) -> bool:
    """Codex's prefix match: every pattern element matches the word at its position (a
    string equals it, a list holds it)."""
    if len(words) < len(pattern):
        return False
    for element, word in zip(pattern, words, strict=False):
        if isinstance(element, str):
            if element != word:
                return False
        elif word not in element:
            return False
    return True


def _pattern_ok(pattern: Any) -> bool:
    if not isinstance(pattern, list | tuple) or not pattern:
        return False
    for element in pattern:
        if isinstance(element, str) and element:
            continue
        if isinstance(element, list | tuple) and element and \
                all(isinstance(e, str) and e for e in element):
            continue
        return False
    return True


def read_rules_file(path: str, level: str) -> Found:
    """The ``prefix_rule`` calls of one ``.rules`` file as `ImportedRule` s (``agent`` codex),
    with a note for everything else in it. `ExampleError` when one of its own examples fails
    (Codex would not load the file)."""
    found = Found(files=[path])
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        found.notes.append(Note(Origin(path), f"cannot be read ({exc}); none of its rules is "
                                "applied"))
        return found
    try:
        tree = ast.parse(text, filename=path, mode="exec")
    except SyntaxError as exc:
        found.notes.append(Note(Origin(path, exc.lineno), f"is not valid Starlark as callgate "
                                f"reads it ({exc.msg}); none of its rules is applied"))
        return found
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        found.notes.append(Note(Origin(path), f"cannot be parsed ({type(exc).__name__}); none "
                                "of its rules is applied"))
        return found
    for statement in tree.body:
        origin = Origin(path, statement.lineno)
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # a docstring
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) or \
                call.func.id not in ("prefix_rule", "host_executable"):
            found.notes.append(Note(origin, "not read: callgate takes only prefix_rule(...) "
                                    "and host_executable(...) calls with literal arguments "
                                    "from a rules file and never runs Starlark"))
            continue
        try:
            names = _PREFIX_ARGS if call.func.id == "prefix_rule" else ("name", "paths")
            if len(call.args) > len(names) or any(k.arg is None for k in call.keywords):
                raise ValueError("too many positional arguments or **kwargs")
            arguments = {names[i]: ast.literal_eval(a) for i, a in enumerate(call.args)}
            for keyword in call.keywords:
                if keyword.arg in arguments:
                    raise ValueError(f"{keyword.arg} given twice")
                arguments[str(keyword.arg)] = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError) as exc:
            found.notes.append(Note(origin, f"not read: {call.func.id}(...) must have literal "
                                    f"arguments ({exc}); callgate never runs Starlark"))
            continue
        if call.func.id == "host_executable":
            found.notes.append(Note(origin, "host_executable: not needed here: callgate's deny "
                                    "and ask rules always see a program's base name "
                                    "(/usr/bin/git is git), and allow rules match the command "
                                    "as written"))
            continue
        _prefix_rule(arguments, origin, level, found)
    return found


def _prefix_rule(arguments: dict[str, Any], origin: Origin, level: str, found: Found) -> None:
    unknown = sorted(set(arguments) - set(_PREFIX_ARGS))
    if unknown:
        found.notes.append(Note(origin, f"prefix_rule: unknown argument {', '.join(unknown)}; "
                                "the rule is not applied"))
        return
    pattern = arguments.get("pattern")
    if not _pattern_ok(pattern):
        found.notes.append(Note(origin, "prefix_rule: pattern must be a non-empty list of words "
                                "or lists of alternative words; the rule is not applied"))
        return
    decision = arguments.get("decision", "allow")
    if decision not in DECISIONS:
        found.notes.append(Note(origin, f"prefix_rule: decision {decision!r} is not allow, "
                                "prompt or forbidden; the rule is not applied"))
        return
    justification = arguments.get("justification")
    if justification is not None and not isinstance(justification, str):
        justification = str(justification)
    examples: dict[str, tuple[Any, ...]] = {}
    for key, wanted in (("match", True), ("not_match", False)):
        given = arguments.get(key, [])
        if not isinstance(given, list | tuple):
            raise ExampleError(origin, f"prefix_rule: {key} must be a list of examples")
        for example in given:
            words = tokens(example)
            if words is None:
                raise ExampleError(origin, f"prefix_rule: {key} example {example!r} is neither "
                                   "a string nor a list of words")
            if codex_matches(pattern, words) != wanted:
                raise ExampleError(origin, f"prefix_rule example fails: pattern "
                                   f"{list(pattern)!r} should {'' if wanted else 'not '}match "
                                   f"{example!r}, but it does{' not' if wanted else ''}")
        examples[key] = tuple(given)
    text = " ".join(e if isinstance(e, str) else "[" + "|".join(e) + "]" for e in pattern)
    found.rules.append(ImportedRule(DECISIONS[decision], text, origin, level, "codex",
                                    match=examples["match"], not_match=examples["not_match"],
                                    justification=justification, pattern=tuple(
                                        e if isinstance(e, str) else tuple(e) for e in pattern)))


def read_rules_dir(directory: str, level: str) -> Found:
    """Every ``*.rules`` file of ``directory`` (sorted), as Codex loads them."""
    found = Found()
    for path in sorted(glob.glob(os.path.join(glob.escape(directory), "*.rules"))):
        found.extend(read_rules_file(path, level))
    return found


__all__ = ["DECISIONS", "ExampleError", "codex_matches", "read_rules_dir", "read_rules_file",
           "tokens"]
