"""Permission rules from ``[permissions]`` (host.md §6).

Rules come in three lists, ``allow``, ``ask`` and ``deny``, of the forms
``Tool`` and ``Tool(spec)``. ``Tool`` is an exact tool name (a name with
``*`` is a literal, not a glob), or a group: every tool whose
``ToolSpec.groups`` holds it (``Edit``: the structured mutations, ``Bash``:
the shell). Names no registered tool carries (the other OS's shell, MCP tools
and connects) are answered by the plugin that owns them
(``registry.add_rule_names``). The spec is matched against the tool's
*permission subject* (`PermissionSubject`):

- a kind a plugin supplies (`callgate.permissions.SubjectKind`,
  ``Registry.add_subject_kind``): the shell plugin's ``command`` splits a line
  into the commands it would run (`SubjectPart`, callgate-commandline: lists,
  pipelines, substitutions, wrappers, launchers, ``git`` without its global
  options). A deny or ask rule
  fires when any part matches, when a part whose tail is completed at run time
  (``echo push | xargs git``) could grow into a match, or when a part cannot be
  decided statically; an allow rule covers a call only when every part is
  matched by some allow rule (an open-ended part only by a rule ending in
  ``*``). A file the value writes (a redirection) is judged as a write by
  ``Edit`` rules: deny and ask ``Edit`` rules fire on it, and it is covered only
  by an ``Edit`` allow rule (or by a spec-less allow of the tool). Rules are a
  policy aid; the sandbox is the boundary.
- ``path``: a glob on the workspace-relative path, in the one glob dialect
  ``glob`` and ``grep`` use too (`callgate.paths.compile_glob`: ``*`` and ``?``
  never cross ``/``, ``**`` does, ``{a,b}`` alternates), matched against the
  whole path (``dir/**`` covers ``dir`` itself; a pattern starting with ``/``
  is absolute). Every path argument must pass (both ends of a move, every file a
  patch names: ``ToolSpec.mutated_paths``), in its written and its symlink-resolved form.
- ``pattern`` and ``url``: ``*`` matches any run, ``/`` included;
  ``domain:<host>`` matches a URL's host.

Precedence is deny > ask > allow > fallback (the session applies the
fallback: allow for read-only tools, else the target's or ``mode``). Every
decision names the rule that made it. Malformed rules fail boot with the
rule's text; rules naming no known tool are warnings.
"""

from __future__ import annotations

import json
import logging
import os
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import attrs

from .._model.errors import ConfigError
from .._model.spec import NAME_RULE, ToolSpec
from .._model.values import Decision

if TYPE_CHECKING:  # and difflib, urllib.parse, the globs: imported where used (not at boot)
    from .._config.source import ConfigSource
    from .boot import BootingHost as Host
    from .boot import RuleNames

log = logging.getLogger("callgate")

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # x-workspace: a workspace config that is not trusted only tightens (_layers)
        "mode": {
            "enum": ["allow", "ask", "deny"],
            "default": "allow",
            "x-workspace": ["allow", "ask", "deny"],
        },
        "allow": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "x-workspace": "user",
            "x-layers": "concat",
            "x-kind": "allowlist",
        },
        "ask": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "x-workspace": "add",
            "x-kind": "denylist",
        },
        "deny": {
            "type": "array",
            "items": {"type": "string"},
            "default": [],
            "x-workspace": "add",
            "x-kind": "denylist",
        },
        "ask_without_approver": {
            "enum": ["deny", "allow"],
            "default": "deny",
            "x-workspace": ["allow", "deny"],
            "x-kind": "scope",
        },
        # rule tests: they only check (a failing one fails boot), so a workspace may add them
        "examples": {
            "type": "array",
            "default": [],
            "x-workspace": "add",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["rule"],
                "properties": {
                    "rule": {"type": "string", "minLength": 1},
                    "match": {"type": "array", "items": {"$ref": "#/$defs/example"}},
                    "not_match": {"type": "array", "items": {"$ref": "#/$defs/example"}},
                },
            },
        },
    },
    "$defs": {
        # a rule's subject as written (a command line, a path, a URL), or a whole call
        "example": {
            "oneOf": [
                {"type": "string"},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["tool"],
                    "properties": {"tool": {"type": "string"}, "arguments": {"type": "object"}},
                },
            ]
        },
    },
}

ACTIONS = ("deny", "ask", "allow")
_RULE = re.compile(r"^([^\s()]+)(?:\((.*)\))?$", re.DOTALL)


class RuleError(ValueError):
    """A rule that cannot be parsed or can never mean anything (a boot error)."""


@attrs.frozen
class Rule:
    """One parsed rule: its list (``allow``/``ask``/``deny``), tool part and spec."""

    action: str
    text: str
    tool: str
    spec: str | None
    index: int = 0

    @classmethod
    def parse(cls, action: str, text: str, index: int = 0) -> Rule:
        stripped = text.strip()
        if not stripped:
            raise RuleError("an empty rule; write a tool name such as read_file or Bash(ls:*)")
        match = _RULE.match(stripped)
        if match is None:
            raise RuleError(
                "expected Tool or Tool(spec): a tool name without spaces, "
                "optionally followed by one parenthesized spec"
            )
        tool, spec = match.group(1), match.group(2)
        if spec is not None:
            spec = spec.strip()
            if not spec:
                raise RuleError(
                    f"the spec in parentheses is empty; write {tool} to match "
                    "every call of the tool"
                )
        return cls(action, stripped, tool, spec, index)


@attrs.frozen
class Unit:
    """One thing a spec is matched against: a command segment or one path argument.

    ``loose`` lists every form a deny or ask rule is tried on (any match fires);
    ``strict`` lists groups of forms an allow rule must cover (every group, by
    any of its forms).
    """

    loose: tuple[str, ...]
    strict: tuple[tuple[str, ...], ...]
    label: str
    #: why this unit cannot be decided statically: it then matches every deny and
    #: ask rule and no allow rule covers it
    undecidable: str | None = None
    #: ``"write"`` for a shell redirection's target (judged by ``Edit`` rules)
    role: str = "subject"
    #: arguments are appended at run time (``xargs``): a rule it could grow into fires
    open_tail: bool = False

    @property
    def inside(self) -> bool:
        """Every form of the path is workspace-relative (for write units)."""
        return all(group and not _is_abs(group[0]) for group in self.strict)


Matcher = Callable[[str], bool]
#: The subject kinds the engine knows itself; any other comes from a plugin (`SubjectKind`).
BUILTIN_KINDS = frozenset({"path", "pattern", "url"})


class SubjectPart(NamedTuple):
    """One thing the rules of a plugin's subject kind judge in a value: a command of a shell
    line, or (``writes``) a file the value writes, which ``Edit`` rules judge.

    ``forms`` are what a deny or ask rule is tried on (any match fires; empty: the
    label); ``allow_forms`` what an allow rule must match one of (empty: ``forms``).
    ``undecidable`` says why the part cannot be judged statically: it then matches every
    deny and ask rule and no allow rule covers it. ``open_tail``: arguments are appended
    at run time, so a rule the part could grow into fires. A ``writes`` part's label is
    the path written (``undecidable`` when it is computed at run time). A named tuple:
    a shell line makes several per decision, and it is the cheapest value to build.
    """

    label: str
    forms: tuple[str, ...] = ()
    allow_forms: tuple[str, ...] = ()
    undecidable: str | None = None
    open_tail: bool = False
    writes: bool = False


@attrs.frozen
class SubjectKind:
    """A permission subject kind a plugin supplies at boot (``Registry.add_subject_kind``);
    the shell plugin supplies ``command``.

    - ``parts(value, dialect)``: what rules judge in one argument value.
    - ``matcher(spec)``: the predicate a ``Tool(spec)`` rule applies to a form; raises
      `ValueError` (its message is shown) for a malformed spec.
    - ``could_grow_into(spec, form)``: whether words appended to an ``open_tail`` form
      could make it match ``spec``.
    - ``suggest(label)``: the spec of an allow rule that would cover a part.
    - ``claims(spec)``: whether a spec of a rule naming a tool not loaded here reads as
      this kind (checked as one at boot).
    - ``read_only(value, dialect)``: ``None`` when the value only reads, else why not; a
      strictly read-only subagent runs a tool of this kind only on such a value.
    """

    name: str
    parts: Callable[[str, str], Sequence[SubjectPart]]
    matcher: Callable[[str], Matcher]
    could_grow_into: Callable[[str, str], bool] | None = None
    suggest: Callable[[str], str] | None = None
    claims: Callable[[str], bool] | None = None
    read_only: Callable[[str, str], str | None] | None = None


@attrs.frozen
class UnitVerdict:
    """What the rules say about one unit of a call (`RuleEngine.unit_verdicts`): ``label``
    (the command as written, the path), ``role`` (``"subject"``, or ``"write"`` for a file a
    shell line writes by redirection), the ``action`` of the rule that decides it (``None``:
    no rule speaks, the fallback would), that ``rule``, why it fired, and why the unit cannot
    be decided statically (it then matches every deny and ask rule)."""

    label: str
    role: str
    action: str | None
    rule: str | None
    reason: str | None = None
    undecidable: str | None = None


# --- spec matchers -----------------------------------------------------------------


def _star_regex(pattern: str) -> str:
    """``*`` matches any run; everything else is literal."""
    return ".*".join(re.escape(part) for part in pattern.split("*"))


def _is_abs(value: str) -> bool:
    return value.startswith("/") or bool(re.match(r"^[A-Za-z]:/", value))


def _clean_path_pattern(spec: str) -> str:
    spec = spec.replace("\\", "/") if os.sep == "\\" else spec
    if spec.startswith("~"):
        spec = os.path.expanduser(spec).replace(os.sep, "/")
    cleaned = posixpath.normpath(spec)
    return "." if cleaned in ("", "./") else cleaned


def compile_spec(kind: str, spec: str, kinds: Mapping[str, SubjectKind] | None = None) -> Matcher:
    """The matcher for ``spec`` under a subject ``kind`` (a built-in one, or one of
    ``kinds``, which plugins supply); `RuleError` when malformed."""
    supplied = (kinds or {}).get(kind)
    if supplied is not None:
        try:
            return supplied.matcher(spec)
        except ValueError as exc:
            raise RuleError(str(exc)) from None
    if kind == "path":
        pattern = _clean_path_pattern(spec)
        absolute = _is_abs(pattern)
        from .._fs.globs import GlobError, compile_glob

        try:
            glob = compile_glob(pattern, by_name=False, tree_root=True)
        except GlobError as exc:
            raise RuleError(f"not a valid path glob ({exc})") from None
        return lambda value: _is_abs(value) == absolute and glob.matches(value)
    if kind == "url" and spec.startswith("domain:"):
        host = spec[len("domain:") :].strip().lower().rstrip(".")
        if not host:
            raise RuleError("domain: needs a host name, e.g. web_fetch(domain:docs.python.org)")
        regex = re.compile(_star_regex(host), re.DOTALL)
        import urllib.parse

        def by_host(value: str) -> bool:
            try:
                hostname = urllib.parse.urlsplit(value).hostname
            except ValueError:
                return False
            return hostname is not None and regex.fullmatch(hostname) is not None

        return by_host
    if kind in ("pattern", "url"):
        regex = re.compile(_star_regex(spec), re.DOTALL)
        return lambda value: regex.fullmatch(value) is not None
    raise RuleError(f"unknown permission subject kind {kind!r} (no loaded plugin supplies it)")


# --- subjects ----------------------------------------------------------------------------


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _path_forms(path: str, root: str | None) -> tuple[str, ...]:
    """The relative (when inside ``root``) and absolute forms of an absolute path."""
    absolute = path.replace(os.sep, "/") if os.sep == "\\" else path
    if root is None:
        return (absolute,)
    # both are absolute and normalized, so a prefix at a separator is "inside"
    if path == root:
        return (".", absolute)
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not path.startswith(prefix):
        return (absolute,)
    rel = path[len(prefix) :]
    return (rel.replace(os.sep, "/") if os.sep == "\\" else rel, absolute)


def _path_unit(text: str, workspace: Any, role: str = "subject") -> Unit:
    """A path argument in its written and symlink-resolved forms (relative when inside)."""
    if workspace is not None:
        try:
            lexical = workspace.lexical(text)
        except Exception:
            lexical = os.path.normpath(text)
        canonical = os.path.realpath(lexical)
        root = workspace.root
    else:
        lexical = canonical = os.path.normpath(os.path.abspath(text))
        root = None
    written, resolved = _path_forms(lexical, root), _path_forms(canonical, root)
    loose = tuple(dict.fromkeys(written + resolved))
    return Unit(loose, (written, resolved), written[0], role=role)


def part_units(kind: SubjectKind, text: str, dialect: str, session: Any = None) -> list[Unit]:
    """The units of one value of a plugin's subject kind: its parts, files written last."""
    workspace = getattr(session, "workspace", None)
    units: list[Unit] = []
    for part in kind.parts(text, dialect):
        if not part.writes:
            forms = part.forms or (part.label,)
            units.append(
                Unit(
                    forms,
                    (part.allow_forms or forms,),
                    part.label,
                    part.undecidable,
                    open_tail=part.open_tail,
                )
            )
        elif part.undecidable is not None:
            units.append(Unit((), (), part.label, part.undecidable, role="write"))
        else:
            units.append(_path_unit(part.label, workspace, role="write"))
    return units


def subject_units(
    spec: ToolSpec,
    arguments: Mapping[str, Any],
    session: Any = None,
    name: str | None = None,
    kinds: Mapping[str, SubjectKind] | None = None,
) -> list[Unit]:
    """What the call's ``Tool(spec)`` rules are matched against (empty: no subject)."""
    subject = spec.permission_subject
    if subject is None or not isinstance(arguments, Mapping):
        return []
    values = [v for arg in subject.arguments for v in _strings(arguments.get(arg))]
    if subject.kind == "path" and spec.mutated_paths is not None:
        # the paths a patch names (ToolSpec.mutated_paths): every one must pass
        values += [path for _role, path in spec.mutated_paths(arguments)]
    supplied = (kinds or {}).get(subject.kind)
    if supplied is not None:
        return [u for text in values for u in part_units(supplied, text, subject.dialect, session)]
    if subject.kind == "path":
        if not values:
            values = ["."]  # a directory argument left out means the workspace root
        workspace = getattr(session, "workspace", None)
        return [_path_unit(text, workspace) for text in values]
    return [_unit(text, subject.forms) for text in values]


def _unit(text: str, forms_of: Callable[[str], Sequence[str]] | None) -> Unit:
    """A ``pattern``/``url`` value: matched as written, or by the subject's own forms
    (allow rules must cover the canonical first form; deny and ask fire on any form)."""
    forms: tuple[str, ...] = ()
    if forms_of is not None:
        try:
            forms = tuple(f for f in forms_of(text) if isinstance(f, str))
        except Exception:
            forms = ()
    if not forms:
        return Unit((text,), ((text,),), text)
    return Unit(tuple(dict.fromkeys((text, *forms))), ((forms[0],),), forms[0])


# --- the engine ---------------------------------------------------------------------------


class RuleEngine:
    """Matches calls against the configured rules; built once per host at boot.

    ``tools`` are the registered tool specs by name (``other_tools``: those of
    the other OS, known but not registered here); ``source`` is where the
    config came from, for error lines; ``rule_names`` are the plugins' answers
    for names no tool carries (`Registry.add_rule_names`). The tools'
    ``groups`` are the group names rules may use.
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        tools: Mapping[str, ToolSpec] | Iterable[str] = (),
        *,
        other_tools: Mapping[str, ToolSpec] | None = None,
        source: ConfigSource | None = None,
        rule_names: Iterable[RuleNames] = (),
        kinds: Mapping[str, SubjectKind] | None = None,
    ) -> None:
        self.mode: str = config.get("mode", "allow")
        self.ask_without_approver: str = config.get("ask_without_approver", "deny")
        self.tools: dict[str, ToolSpec] = dict(tools) if isinstance(tools, Mapping) else {}
        names = set(self.tools) if isinstance(tools, Mapping) else set(tools)
        self.other_tools = dict(other_tools or {})
        self.groups: frozenset[str] = frozenset(
            g for spec in (*self.other_tools.values(), *self.tools.values()) for g in spec.groups
        )
        self.warnings: list[str] = []
        self._source = source
        self._rule_names = list(rule_names)
        #: the subject kinds plugins supply (the shell's ``command``), by name
        self.kinds: dict[str, SubjectKind] = dict(kinds or {})
        self._grows = {name: k.could_grow_into for name, k in self.kinds.items()}
        self._matchers: dict[tuple[str, str], Matcher] = {}
        self._names = names
        self.rules: list[Rule] = []
        for action in ACTIONS:
            for index, text in enumerate(config.get(action, [])):
                try:
                    self.add(action, text, index)
                except RuleError as exc:
                    raise self._error(action, index, text, str(exc)) from None
        for index, example in enumerate(config.get("examples", [])):
            self._check_examples(index, example)

    def add(self, action: str, text: str, index: int | None = None) -> Rule:
        """Parse and check one rule and add it to ``action``'s list; `RuleError` when it is
        malformed (a rule naming no known tool is a warning, as at boot)."""
        if action not in ACTIONS:
            raise RuleError(f"unknown rule list {action!r}; use allow, ask or deny")
        rule = Rule.parse(
            action,
            text,
            len([r for r in self.rules if r.action == action]) if index is None else index,
        )
        self._check(rule, self._names)
        self.rules.append(rule)
        return rule

    @classmethod
    def from_host(cls, host: Host) -> RuleEngine:
        """The engine for a booting host: its ``[permissions]`` table and registry."""
        return cls(
            host.config("permissions"),
            {s.name: s for s in host.registry.tools()},
            other_tools={s.name: s for s in host.registry.other_os_tools()},
            source=host.config_source,
            rule_names=[recognize for _plugin, recognize in host.registry.rule_names()],
            kinds=host.registry.subject_kinds(),
        )

    # --- boot checks ---------------------------------------------------------------

    def _error(self, action: str, index: int, text: str, reason: str) -> ConfigError:
        source = self._source
        file, line = (
            source.locate(("permissions", action), text) if source is not None else (None, None)
        )
        return ConfigError(
            f"malformed rule {json.dumps(text)}: {reason}",
            file=file,
            key=f"permissions.{action}[{index}]",
            line=line,
        )

    def _warn(self, rule: Rule, message: str) -> None:
        where = ""
        source = self._source
        file, line = (
            source.locate(("permissions", rule.action), rule.text)
            if source is not None
            else (None, None)
        )
        if file:
            where = f"{file}:{line}: " if line else f"{file}: "
        text = f"{where}[permissions] {rule.action} rule {json.dumps(rule.text)} {message}"
        log.warning(text)
        self.warnings.append(text)

    def _members(self, rule: Rule) -> list[ToolSpec]:
        """The known tools a rule's tool part names (a group names several)."""
        known = {**self.other_tools, **self.tools}
        if rule.tool in self.groups:
            return [s for _n, s in sorted(known.items()) if rule.tool in s.groups]
        spec = known.get(rule.tool)
        return [spec] if spec is not None else []

    def _check(self, rule: Rule, names: set[str]) -> None:
        members = self._members(rule)
        group = rule.tool in self.groups
        if rule.spec is not None:
            kinds = {m.permission_subject.kind for m in members if m.permission_subject}
            for kind in sorted(kinds):
                self._matcher(kind, rule.spec)  # raises RuleError when malformed
            if not group and members and not kinds:
                raise RuleError(
                    f"tool {rule.tool} takes no spec (it has no permission "
                    f"subject); write {rule.tool} alone"
                )
            if group and not kinds:
                self._warn(rule, f"matches nothing: no {rule.tool} tool has a permission subject")
            if not members:
                self._matcher(self._guess_kind(rule.spec), rule.spec)
        if group or rule.tool in names or rule.tool in self.other_tools:
            return
        if any(c in rule.tool for c in "*?["):
            self._warn(
                rule, "matches no tool: tool names are exact, not patterns (a rule names one tool)"
            )
            return
        for recognize in self._rule_names:
            try:
                answer = recognize(rule.tool)
            except Exception:
                log.exception("a plugin's rule-name check failed on %r", rule.tool)
                continue
            if isinstance(answer, str) and answer:
                self._warn(rule, answer)
                return
            if answer:
                return
        if not NAME_RULE.match(rule.tool):
            self._warn(rule, f"matches no tool: {rule.tool!r} is not a valid tool name")
            return
        import difflib  # a rule naming no tool only

        close = difflib.get_close_matches(rule.tool, sorted(names | self.groups), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        self._warn(rule, f"names {rule.tool!r}, which is not a registered tool{hint}")

    def _matcher(self, kind: str, spec: str) -> Matcher:
        matcher = self._matchers.get((kind, spec))
        if matcher is None:
            matcher = self._matchers[kind, spec] = compile_spec(kind, spec, self.kinds)
        return matcher

    def _guess_kind(self, spec: str) -> str:
        """For a rule naming a tool not loaded here: the kind its spec most likely reads as."""
        return next((k.name for k in self.kinds.values() if k.claims and k.claims(spec)), "pattern")

    # --- matching ------------------------------------------------------------------

    def applies(self, rule: Rule, name: str, spec: ToolSpec | None) -> bool:
        """Whether ``rule``'s tool part names this call (exactly, or through a group)."""
        if rule.tool == name:
            return True
        if rule.tool not in self.groups:
            return False
        spec = spec or self.tools.get(name) or self.other_tools.get(name)
        return (
            spec is not None
            and rule.tool in spec.groups
            and name in (spec.name, spec.permission_name)
        )

    def _fires(self, rule: Rule, kind: str | None, units: list[Unit]) -> Unit | bool | None:
        """For deny/ask: ``True`` (spec-less), the first unit a form of which matches, or None.

        An undecidable unit matches every rule that has a spec.
        """
        if rule.spec is None:
            return True
        if kind is None:
            return None
        matcher = self._matcher(kind, rule.spec)
        grows = self._grows.get(kind)
        return next(
            (
                u
                for u in units
                if u.undecidable is not None
                or any(matcher(form) for form in u.loose)
                or (u.open_tail and grows is not None and any(grows(rule.spec, f) for f in u.loose))
            ),
            None,
        )

    def _edit_rules(self, kind: str | None) -> list[Rule]:
        """``Edit`` rules, which also judge the files a value of a plugin's kind writes (a
        shell command's redirections)."""
        return [r for r in self.rules if r.tool == "Edit"] if kind in self.kinds else []

    def decide(
        self,
        name: str,
        spec: ToolSpec | None,
        arguments: Any,
        session: Any = None,
        *,
        only: Sequence[Rule] | None = None,
    ) -> Decision | None:
        """The rule decision for one call, or ``None`` when no rule speaks (fallback).
        ``only``: judge with these rules alone (a rule's examples)."""
        pool = self.rules if only is None else list(only)
        rules = [r for r in pool if self.applies(r, name, spec)]
        kind = spec.permission_subject.kind if spec and spec.permission_subject else None
        edits = [r for r in pool if r.tool == "Edit"] if kind in self.kinds else []
        if not rules and not edits:
            return None
        units = (
            subject_units(spec, arguments, session, name, self.kinds)
            if spec is not None and (edits or any(r.spec is not None for r in rules))
            else []
        )
        subjects = [u for u in units if u.role != "write"]
        writes = [u for u in units if u.role == "write"]
        for action in ("deny", "ask"):
            checks = [(r, kind, subjects) for r in rules if r.action == action]
            if writes:
                checks += [(r, "path", writes) for r in edits if r.action == action]
            for rule, rule_kind, pool in checks:
                hit = self._fires(rule, rule_kind, pool)
                if hit is True:
                    if pool is writes:
                        hit = writes[0]
                    else:
                        return Decision(
                            action,
                            rule.text,  # type: ignore[arg-type]
                            source="permissions",
                        )
                if isinstance(hit, Unit):
                    return Decision(
                        action,
                        rule.text,  # type: ignore[arg-type]
                        reason=_why(hit),
                        source="permissions",
                    )
        allows = [r for r in rules if r.action == "allow"]
        for rule in allows:
            if rule.spec is None:
                return Decision("allow", rule.text, source="permissions")
        covering = self._cover(allows, kind, units, [r for r in edits if r.action == "allow"])
        if covering:
            return Decision("allow", ", ".join(covering), source="permissions")
        return None

    def _covering_rule(
        self, unit: Unit, allows: list[Rule], kind: str | None, edit_allows: list[Rule]
    ) -> Rule | None:
        """The allow rule that covers ``unit`` (every strict group, by any of its forms)."""
        if unit.undecidable is not None:
            return None
        if unit.role == "write":
            for rule in edit_allows:
                if rule.spec is None:
                    if unit.inside:
                        return rule
                    continue
                matcher = self._matcher("path", rule.spec)
                if all(any(matcher(f) for f in group) for group in unit.strict):
                    return rule
            return None
        if kind is None:
            return None
        rule = None
        for group in unit.strict:
            rule = next(
                (
                    r
                    for r in allows
                    if r.spec is not None
                    and (not unit.open_tail or r.spec.rstrip().endswith("*"))
                    and any(self._matcher(kind, r.spec)(f) for f in group)
                ),
                None,
            )
            if rule is None:
                return None
        return rule

    def _cover(
        self,
        allows: list[Rule],
        kind: str | None,
        units: list[Unit],
        edit_allows: Iterable[Rule] = (),
    ) -> list[str]:
        """The allow rules that together cover every unit (empty: not covered)."""
        edit_allows = list(edit_allows)
        if kind is None or not units or not (allows or edit_allows):
            return []
        used: list[str] = []
        for unit in units:
            rule = self._covering_rule(unit, allows, kind, edit_allows)
            if rule is None:
                return []
            if rule.text not in used:
                used.append(rule.text)
        return used

    def unit_verdicts(
        self, name: str, spec: ToolSpec | None, arguments: Any, session: Any = None
    ) -> list[UnitVerdict]:
        """What the rules say about each thing a call's rules judge on their own: every
        command a shell line runs and every file it writes by redirection, every path
        argument, the URL. (A call is allowed only when every unit is; deny and ask win.)"""
        if spec is None:
            return []
        kind = spec.permission_subject.kind if spec.permission_subject else None
        rules = [r for r in self.rules if self.applies(r, name, spec)]
        edits = self._edit_rules(kind)
        out = []
        for unit in subject_units(spec, arguments, session, name, self.kinds):
            writes = unit.role == "write"
            pool, unit_kind = (edits, "path") if writes else (rules, kind)
            found: tuple[str, str, str | None] | None = None
            for action in ("deny", "ask"):
                for rule in (r for r in pool if r.action == action):
                    hit = self._fires(rule, unit_kind, [unit])
                    if hit is True and writes and rule.spec is None:
                        hit = unit
                    if hit is True or isinstance(hit, Unit):
                        found = (action, rule.text, _why(unit))
                        break
                if found:
                    break
            if found is None:
                allows = [r for r in rules if r.action == "allow"]
                edit_allows = [r for r in edits if r.action == "allow"]
                bare = next((r for r in allows if r.spec is None), None)
                covering = (
                    bare
                    if bare is not None and not writes
                    else self._covering_rule(unit, allows, kind, edit_allows)
                )
                if covering is not None:
                    found = ("allow", covering.text, None)
            out.append(
                UnitVerdict(
                    unit.label,
                    "write" if writes else "subject",
                    found[0] if found else None,
                    found[1] if found else None,
                    found[2] if found else None,
                    unit.undecidable,
                )
            )
        return out

    # --- examples (match / not_match) ------------------------------------------------

    def example_call(self, rule: Rule, example: Any) -> tuple[str, ToolSpec | None, Any] | str:
        """The call an example of ``rule`` stands for: ``(tool name, spec, arguments)``, or
        why it cannot be judged here. A string is the rule's subject as written (a command
        line, a path, a URL) for the rule's tool, or for a group, its first member with a
        subject; ``{"tool": ..., "arguments": {...}}`` is a whole call."""
        known = {**self.other_tools, **self.tools}
        if isinstance(example, Mapping):
            name = example.get("tool")
            if not isinstance(name, str):
                return 'a call example needs "tool"'
            return name, known.get(name), dict(example.get("arguments") or {})
        if not isinstance(example, str):
            return "an example is a string or a table with tool and arguments"
        members = [  # a tool whose subject is one argument (apply_patch's are inside one)
            m
            for m in self._members(rule)
            if m.permission_subject is not None and m.permission_subject.arguments
        ] or self._members(rule)
        if not members:
            return (
                f"the rule names {rule.tool!r}, which no tool loaded here carries, so its "
                "examples cannot be judged"
            )
        spec = members[0]
        subject = spec.permission_subject
        if subject is None or not subject.arguments:
            return spec.name, spec, {}
        return spec.name, spec, {subject.arguments[0]: example}

    def example_matches(self, rule: Rule, example: Any, session: Any = None) -> bool:
        """Whether ``rule`` alone decides ``example`` (a deny or ask rule fires on it, an allow
        rule covers it), as it would decide the call in a session (paths are
        workspace-relative). `RuleError` when the example cannot be judged here."""
        found = self.example_call(rule, example)
        if isinstance(found, str):
            raise RuleError(found)
        name, spec, arguments = found
        return (
            self.decide(name, spec, arguments, session or _EXAMPLE_SESSION, only=[rule]) is not None
        )

    def _check_examples(self, index: int, entry: Mapping[str, Any]) -> None:
        text = str(entry.get("rule", "")).strip()
        rules = [r for r in self.rules if r.text == text]
        key = ("permissions", "examples")
        if not rules:
            raise self._example_error(
                index, None, f"rule {json.dumps(text)} is not in [permissions] allow, ask or deny"
            )
        for rule in rules:
            for wanted, examples in (
                (True, entry.get("match", ())),
                (False, entry.get("not_match", ())),
            ):
                for example in examples:
                    try:
                        got = self.example_matches(rule, example)
                    except RuleError as exc:
                        warning = (
                            f"[permissions] examples[{index}] of "
                            f"{rule.action} rule {json.dumps(rule.text)}: {exc}"
                        )
                        log.warning(warning)
                        self.warnings.append(warning)
                        return
                    if got != wanted:
                        shown = json.dumps(example, ensure_ascii=False)
                        verb = "match" if wanted else "not match"
                        does = "does not" if wanted else "does"
                        raise self._example_error(
                            index,
                            example if isinstance(example, str) else None,
                            f"{rule.action} rule {json.dumps(rule.text)} should {verb} "
                            f"{shown}, but it {does}",
                            key,
                        )

    def _example_error(
        self,
        index: int,
        value: str | None,
        reason: str,
        key: tuple[str, str] = ("permissions", "examples"),
    ) -> ConfigError:
        source = self._source
        file, line = source.locate(key, value) if source is not None else (None, None)
        return ConfigError(
            f"failing rule example: {reason}",
            file=file,
            key=f"permissions.examples[{index}]",
            line=line,
        )

    def denied_by_name(self, name: str, spec: ToolSpec | None = None) -> str | None:
        """The spec-less deny rule that denies every call of ``name``, if any.

        The capability plugin hides such ids and re-checks them right before a
        connect or a ``tools/call`` (capability.md §1, §5).
        """
        for rule in self.rules:
            if rule.action == "deny" and rule.spec is None and self.applies(rule, name, spec):
                return rule.text
        return None

    def allow_rules_for(
        self, name: str, arguments: Any, spec: ToolSpec | None = None, session: Any = None
    ) -> list[str]:
        """Rules that, added to ``allow``, would allow this call (for "no approver" refusals)."""
        spec = spec or self.tools.get(name) or self.other_tools.get(name)
        if spec is None or spec.permission_subject is None:
            return [name]
        kind = spec.permission_subject.kind
        # a command rule is suggested under the tool's group, so it covers either OS's shell
        group = spec.groups[0] if spec.groups else None
        allows = [
            r
            for r in self.rules
            if r.action == "allow" and r.spec is not None and self.applies(r, name, spec)
        ]
        edit_allows = [r for r in self._edit_rules(kind) if r.action == "allow"]
        wanted: list[str] = []
        suggest = getattr(self.kinds.get(kind), "suggest", None)
        for unit in subject_units(spec, arguments, session, name, self.kinds):
            if self._covering_rule(unit, allows, kind, edit_allows) is not None:
                continue
            if unit.undecidable is not None:
                rule = group or name  # only a rule without a spec can allow it
            elif unit.role == "write":
                rule = f"Edit({unit.label})"
            elif suggest is not None:
                rule = f"{group or name}({suggest(unit.label)})"
            elif kind == "url":
                import urllib.parse

                host = urllib.parse.urlsplit(unit.label).hostname if "://" in unit.label else None
                rule = f"{name}(domain:{host})" if host else f"{name}({unit.label})"
            else:
                rule = f"{name}({unit.label})"
            if rule not in wanted:
                wanted.append(rule)
        return wanted or [name]

    def allow_rule_for(self, name: str, arguments: Any) -> str:
        """The rule text that would allow this call (the first, when several are needed)."""
        return self.allow_rules_for(name, arguments)[0]


class _ExampleWorkspace:
    """Where a rule example's relative paths are: a workspace root that names nothing on
    disk (so no symlink resolves), workspace-relative forms as in a session."""

    root = os.path.join(os.sep, "callgate-rule-example-workspace")

    def lexical(self, text: str) -> str:
        return os.path.normpath(os.path.join(self.root, os.path.expanduser(text)))


class _ExampleSession:
    workspace = _ExampleWorkspace()


_EXAMPLE_SESSION = _ExampleSession()


def _why(unit: Unit) -> str:
    """The reason a deny or ask rule fired on ``unit``, for the model."""
    if unit.undecidable is not None:
        return (
            f"{json.dumps(unit.label)} cannot be decided statically: {unit.undecidable}; "
            "that counts as matching every deny and ask rule"
        )
    if unit.role == "write":
        return f"the command writes {json.dumps(unit.label)}"
    return f"it matches {json.dumps(unit.label)}"


__all__ = [
    "BUILTIN_KINDS",
    "CONFIG_SCHEMA",
    "Rule",
    "RuleEngine",
    "RuleError",
    "SubjectKind",
    "SubjectPart",
    "UnitVerdict",
    "compile_spec",
    "part_units",
    "subject_units",
]
