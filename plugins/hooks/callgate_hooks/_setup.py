"""What a host and each of its sessions run and apply: hooks and imported rules, from the
user's sources (read once, at boot) and a trusted workspace's (read when a session opens on
it), with the boot report of everything not applied.

Trust (issue 30's boundary): a workspace's ``.claude/`` and ``.codex/`` files are
workspace-controlled, so they are read only for a workspace the user config lists in
``[trust] workspaces``; for any other, nothing in them runs or applies, and the report says
which files were left alone. The files the plugin reads are protected in every write root
(`Registry.protect`), so a model cannot plant them for the next session.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs
from callgate import Decision, ToolCall
from callgate.host import BootError
from callgate.rules import RuleError, RuleSet

from . import _codex_rules as codex_rules
from ._sources import (
    PROJECT_FILES,
    USER,
    WORKSPACE,
    Found,
    Handler,
    ImportedRule,
    Note,
    Origin,
    codex_home,
    parse_hooks,
    read_claude_settings,
    read_codex_config,
    read_codex_hooks,
    toml_locator,
)
from ._translate import example_line, translate_claude, translate_codex, translate_mode

if TYPE_CHECKING:
    from callgate import Host, Registry, SessionView, ToolSpec

log = logging.getLogger("callgate.hooks")
SOURCE = "hooks"


@attrs.frozen
class Settings:
    """``[claude_code]`` as validated."""

    read: tuple[str, ...]
    claude_dir: str
    codex_dir: str
    fail_closed: bool
    timeout_s: float


def read_sources(settings: Settings, directory: str | None, level: str) -> Found:
    """The hooks, rules and modes of one level: the user's files (``directory`` None) or a
    workspace's (``directory`` its root)."""
    found = Found()
    opts = {"default_fail_closed": settings.fail_closed}
    if "claude" in settings.read:
        base = settings.claude_dir if directory is None else os.path.join(directory, ".claude")
        names = ("settings.json",) if directory is None else ("settings.json",
                                                               "settings.local.json")
        for name in names:
            found.extend(read_claude_settings(os.path.join(base, name), level,
                                              default_timeout=settings.timeout_s, **opts))
    if "codex" in settings.read:
        base = settings.codex_dir if directory is None else os.path.join(directory, ".codex")
        found.extend(read_codex_hooks(os.path.join(base, "hooks.json"), level, **opts))
        found.extend(read_codex_config(os.path.join(base, "config.toml"), level, **opts))
        try:
            found.extend(codex_rules.read_rules_dir(os.path.join(base, "rules"), level))
        except codex_rules.ExampleError as exc:
            raise BootError(f"a Codex rule's own example fails (Codex would not load this "
                            f"file): {exc}") from None
    return found


def project_files(settings: Settings, root: str) -> list[str]:
    """The settings files a workspace holds that the plugin would read (for the report)."""
    out = []
    for agent in settings.read:
        for rel in PROJECT_FILES[agent]:
            path = os.path.join(root, rel)
            if os.path.isfile(path) or (os.path.isdir(path) and any(
                    n.endswith(".rules") for n in os.listdir(path))):
                out.append(path)
    return out


# --- imported rules -----------------------------------------------------------------------


@attrs.frozen
class Applied:
    """An imported rule as applied: the callgate rule, where it came from, its original."""

    action: str
    rule: str
    origin: Origin
    original: ImportedRule


class ImportedRules:
    """The rules imported for one session, judged by callgate's own engine (`RuleSet`)."""

    def __init__(self, host: Host, rules: Iterable[ImportedRule], notes: list[Note]) -> None:
        self._set = RuleSet(host, source=SOURCE)
        specs = [*host.registry.tools(), *host.registry.other_os_tools()]
        self._known = {s.name for s in specs} | {g for s in specs for g in s.groups}
        self._origins: dict[tuple[str, str], Origin] = {}
        self._originals: dict[tuple[str, str], ImportedRule] = {}
        self._prefixes: list[tuple[str, str, ImportedRule]] = []
        self.applied: list[Applied] = []
        for rule in rules:
            translation = translate_claude(rule) if rule.agent == "claude" \
                else translate_codex(rule)
            shown = f"{rule.action} rule {rule.text!r}"
            added: list[Any] = []
            for text in translation.rules:
                if not self._loaded(text):
                    continue  # a tool this host does not have: nothing to allow or deny
                try:
                    added.append(self._set.add(rule.action, text))
                except RuleError as exc:
                    notes.append(Note(rule.origin, f"{shown} -> {text}: {exc}; not applied"))
                    continue
                self._origins.setdefault((rule.action, text), rule.origin)
                self._originals.setdefault((rule.action, text), rule)
                self.applied.append(Applied(rule.action, text, rule.origin, rule))
            for prefix in translation.prefixes:
                self._prefixes.append((rule.action, prefix, rule))
                self.applied.append(Applied(rule.action, f"{prefix}*", rule.origin, rule))
            if rule.agent == "codex" and added:
                self._check_codex_examples(rule, added, notes)
        for warning in self._set.warnings:
            notes.append(Note(Origin("imported rules"), warning))

    def _loaded(self, text: str) -> bool:
        """Whether a rule's tool part names a tool (or group) of this host, or a name its
        plugins answer for (MCP names)."""
        name = text.split("(", 1)[0]
        return name in self._known or name.startswith(("mcp__", "mcp_connect__"))

    def _check_codex_examples(self, rule: ImportedRule, added: list[Any],
                              notes: list[Note]) -> None:
        """Codex's own examples, judged by the imported rules: where callgate decides one
        differently, the report says so (the rule is kept: callgate's engine is the one
        deciding, and a deny that refuses more is no loosening)."""
        for wanted, examples in ((True, rule.match), (False, rule.not_match)):
            for example in examples:
                line = example_line(example)
                try:
                    got = any(self._set.matches(r, line) for r in added)
                except RuleError:
                    continue
                if got != wanted:
                    verb = "also matches" if got else "does not match"
                    notes.append(Note(rule.origin, f"{rule.action} rule {rule.text!r}: "
                                      f"callgate's rule {verb} the example {line!r}, which "
                                      f"Codex's {'does not' if got else 'does'}"))

    def decide(self, call: ToolCall, tool: ToolSpec, session: SessionView) -> list[Decision]:
        out: list[Decision] = []
        found = self._set.decide(call, tool, session)
        if found is not None:
            origin = self._origins.get((found.action, found.rule or ""))
            original = self._originals.get((found.action, found.rule or ""))
            rule = f"{found.rule} ({origin})" if origin is not None else found.rule
            reason = found.reason
            if original is not None and original.justification:  # Codex's, for the model
                reason = f"{reason}; {original.justification}" if reason \
                    else original.justification
            out.append(Decision(found.action, rule, reason, source=SOURCE))
        name = call.name
        for action, prefix, original in self._prefixes:
            if isinstance(name, str) and name.startswith(prefix):
                out.append(Decision(action, f"{original.text} ({original.origin})",  # type: ignore[arg-type]
                                    f"{name} is a tool of MCP server "
                                    f"{prefix[5:-2]}", source=SOURCE))
        return out

    def unit_verdicts(self, call: ToolCall, tool: ToolSpec, session: SessionView) -> list[Any]:
        return self._set.unit_verdicts(call, tool, session)

    def origin_of(self, action: str, rule: str) -> Origin | None:
        return self._origins.get((action, rule))


# --- the host and its sessions --------------------------------------------------------------


class HostHooks:
    """What a booted host runs: the user's hooks and rules, and how to read a workspace's."""

    def __init__(self, host: Host, settings: Settings, found: Found) -> None:
        self.host = host
        self.settings = settings
        self.user = found
        self.notes: list[Note] = list(found.notes)
        self._workspaces: dict[str, Found] = {}

    @classmethod
    def boot(cls, registry: Registry, host: Host, hooks_table: dict[str, Any],
             table: dict[str, Any]) -> HostHooks:
        settings = Settings(
            read=tuple(table["read"]),
            claude_dir=os.path.abspath(os.path.expanduser(table["claude_dir"])),
            codex_dir=codex_home(table["codex_dir"]),
            fail_closed=table["fail_closed"], timeout_s=float(table["timeout_s"]))
        found = Found()
        own = {event: groups for event, groups in hooks_table.items() if groups}
        if own:
            level = USER
            source = getattr(host, "config_source", None)
            origin = source.origin(("hooks",)) if source is not None else None
            if origin is not None and getattr(origin, "kind", USER) == "workspace":
                level = WORKSPACE  # a trusted workspace's callgate.toml
            file = registry.config_file("hooks") or "<config>"
            locate = _file_locator(file)
            found.extend(parse_hooks(own, file, locate, level, base=("hooks",),
                                     default_timeout=settings.timeout_s,
                                     default_fail_closed=settings.fail_closed))
        found.extend(read_sources(settings, None, USER))
        report_translations(found, found.notes)
        state = cls(host, settings, found)
        if host.workspace is not None and settings.read:
            state.for_workspace(host.workspace, at_boot=True)
        return state

    def for_workspace(self, root: str, *, at_boot: bool = False) -> Found:
        """A workspace's own sources (read once per workspace; nothing for one the user config
        does not trust, with a warning naming its files)."""
        root = os.path.realpath(root)
        cached = self._workspaces.get(root)
        if cached is not None:
            return cached
        found = Found()
        if not self.settings.read:
            pass
        elif self.host.config_source.trusts(root):
            found = read_sources(self.settings, root, WORKSPACE)
            report_translations(found, found.notes)
            self.notes.extend(found.notes)
            for note in found.notes:
                log.warning(str(note))
                if at_boot:
                    self.host.warnings.append(str(note))
        else:
            files = project_files(self.settings, root)
            if files:
                shown = ", ".join(os.path.relpath(f, root) for f in files)
                user = self.host.config_source.user_file or "the user config"
                message = (f"{root}: the workspace's {shown} define hooks or rules; none of them "
                           "runs or applies, because the workspace is not trusted (list it in "
                           f"[trust] workspaces of {user} to use them)")
                found.notes.append(Note(Origin(root), message.split(": ", 1)[1]))
                log.warning(message)
                if at_boot:
                    self.host.warnings.append(message)
                    self.host.forced.append(message)
        self._workspaces[root] = found
        return found

    def report(self) -> list[str]:
        return [str(n) for n in self.notes]


def _file_locator(file: str) -> Any:
    try:
        with open(file, encoding="utf-8") as fh:
            return toml_locator(fh.read())
    except OSError:
        return lambda path: None


def report_translations(found: Found, notes: list[Note]) -> None:
    """The boot report's lines for the rules and modes of ``found`` that callgate cannot apply
    exactly (what `ImportedRules` and `modes_for` then apply, without repeating them)."""
    for rule in found.rules:
        translation = translate_claude(rule) if rule.agent == "claude" else translate_codex(rule)
        if translation.note:
            notes.append(Note(rule.origin, f"{rule.action} rule {rule.text!r}: "
                              f"{translation.note}"))
    for setting, value, origin in found.modes:
        effect = translate_mode(setting, value)
        if effect.note:
            notes.append(Note(origin, effect.note))


def modes_for(found: Found, notes: list[Note]) -> tuple[str | None, str | None, bool,
                                                       list[ImportedRule]]:
    """``(fallback, because, plan, extra allow rules)`` of the mode settings in ``found``."""
    fallback: str | None = None
    because: str | None = None
    plan = False
    extra: list[ImportedRule] = []
    order = {"allow": 0, "ask": 1, "deny": 2}
    for setting, value, origin in found.modes:
        effect = translate_mode(setting, value)
        if effect.fallback and (fallback is None or order[effect.fallback] > order[fallback]):
            fallback, because = effect.fallback, f"{setting} {value!r} in {origin}" + (
                " (Claude Code's default: the file sets none)" if origin.line is None and
                setting == "defaultMode" else "")
        plan = plan or effect.plan
        for text in effect.allow:
            extra.append(ImportedRule("allow", text, origin, USER, "claude"))
    return fallback, because, plan, extra


def handlers_of(*founds: Found) -> list[Handler]:
    """Every handler, once (Claude Code runs identical commands once)."""
    seen: set[tuple[str, str | None, str | None, str | None]] = set()
    out: list[Handler] = []
    for found in founds:
        for handler in found.handlers:
            key = (handler.event, handler.matcher, handler.command, handler.url)
            if key in seen:
                continue
            seen.add(key)
            out.append(handler)
    return out


__all__ = ["SOURCE", "Applied", "HostHooks", "ImportedRules", "Settings", "handlers_of",
           "modes_for", "project_files", "read_sources"]
