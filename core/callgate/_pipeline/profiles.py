"""Child profiles: what a subagent's session may run, enforced by the pipeline at run time.

A `ChildProfile` is given to ``session.open_child(profile=...)``. The child keeps the
profiles of every ancestor too, so a child can never be wider than its parent. Hiding
tools from the child's surface is a convenience; what counts is `refusal`, which the
pipeline asks for every call once its effective tool is known (after a proxy resolved
its target), before hooks, permission and dispatch.

A strict read-only profile (``read_only=True``) lets a call run only when

- its effective tool is read-only for these arguments; a tool whose permission subject
  kind a plugin supplies with a read-only verdict (`SubjectKind.read_only`: the shell's
  ``command``, callgate-commandline's `readonly_command`, a real bash parser; whatever it
  cannot decide is refused, never guessed) only in the foreground and only for a value
  the verdict accepts;
- a capability the host does not register itself (an MCP tool behind a proxy) is
  read-only (``readOnlyHint``, trusted server) and not destructive;
- it is none of the names plugins gave `Registry.deny_in_read_only_children` (the tasks
  plugin names ask, todos, slash commands, installs, fleets and job tools there).

Depth: a session at depth ``d`` may open a child only while ``d < max_depth`` (the
smallest ``max_depth`` of its profiles, else `DEFAULT_MAX_DEPTH`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .._model.values import ToolResult
from .._permissions.rules import BUILTIN_KINDS
from .childprofile import ChildProfile, _matches

if TYPE_CHECKING:
    from .._model.spec import ToolSpec
    from .state import SessionState as Session  # the pipeline's state of the session
    from .step import Step

#: How deep children may nest when no profile says otherwise (``[tasks] max_depth``).
DEFAULT_MAX_DEPTH = 3


# --- what a session's profiles say about its tools ---------------------------------------


def available(
    profiles: tuple[ChildProfile, ...], spec: ToolSpec, strict_denials: Iterable[str] = ()
) -> bool:
    """Whether a child with ``profiles`` has ``spec`` at all (its surface and tool table).
    A strict child keeps a tool whose read-only flag depends on its arguments (a proxy) and
    a shell tool (judged per command); a plain writer is left out."""
    return spec.name in allowed(profiles, tuple(strict_denials), (_candidate(spec),))


def _candidate(spec: ToolSpec) -> tuple[str, bool]:
    """``(name, writer)``: ``writer`` when a strict child cannot have the tool at all."""
    return spec.name, spec.read_only is False and not _judged_per_value(spec)


@functools.lru_cache(maxsize=256)
def _allowed(
    profiles: tuple[ChildProfile, ...],
    denials: tuple[str, ...],
    candidates: tuple[tuple[str, bool], ...],
) -> frozenset[str]:
    return frozenset(
        name
        for name, writer in candidates
        if all(p.allows_name(name, denials) and not (p.read_only and writer) for p in profiles)
    )


def allowed(
    profiles: tuple[ChildProfile, ...],
    denials: tuple[str, ...],
    candidates: tuple[tuple[str, bool], ...],
) -> frozenset[str]:
    """The candidate names a child with ``profiles`` has (cached: children of one kind
    are opened again and again)."""
    return _allowed(profiles, denials, candidates)


def tools_of(
    profiles: tuple[ChildProfile, ...], denials: tuple[str, ...], tools: dict[str, ToolSpec]
) -> dict[str, ToolSpec]:
    """``tools`` narrowed to what a child with ``profiles`` has."""
    names = allowed(profiles, denials, tuple(_candidate(s) for s in tools.values()))
    return {n: s for n, s in tools.items() if n in names}


def listed(profiles: tuple[ChildProfile, ...]) -> bool:
    """Whether some profile names its tools (they are then all on the child's surface)."""
    return any(p.tools is not None for p in profiles)


def max_depth(profiles: tuple[ChildProfile, ...]) -> int:
    limits = [p.max_depth for p in profiles if p.max_depth is not None]
    return min(limits) if limits else DEFAULT_MAX_DEPTH


def plan_allows(profiles: tuple[ChildProfile, ...], step: Step, registry: Any) -> bool:
    """Whether plan mode lets a call that is not read-only run anyway: an external
    capability that is not destructive, for a profile whose MCP policy is
    ``not_destructive`` (the planner may use MCP tools without ``readOnlyHint``)."""
    return (
        bool(profiles)
        and profiles[-1].mcp_policy == "not_destructive"
        and _external(step, registry)
        and not step.destructive
    )


# --- the check the pipeline runs -------------------------------------------------------


def refusal(session: Session, step: Step) -> ToolResult | None:
    """The ``blocked`` result when the session's profiles forbid this call, else ``None``.
    May mark a classified read-only command ``step.read_only``."""
    profiles = session.profiles
    if not profiles:
        return None
    tool = step.tool
    assert tool is not None
    registry = session.host.registry
    denials = registry.read_only_child_denials
    external = _external(step, registry)
    names = [step.sent.name]
    if step.call.name != step.sent.name and not external:
        names.append(step.call.name)  # the registered tool a proxy or alias runs
    for profile in profiles:
        for name in names:
            if not profile.allows_name(name, denials):
                return _refused(profile, name, _why_name(profile, name, denials))
        why = _flags(profile, session, step, tool, external)
        if why is not None:
            return _refused(profile, step.call.name, why)
    return None


def left_out(session: Session, name: str) -> ToolResult | None:
    """The refusal for a registered tool the session's profiles left out of it (so the
    model hears why, not that the tool does not exist), else ``None``."""
    registry = session.host.registry
    spec = registry.get(name)
    if spec is None:
        return None
    denials = registry.read_only_child_denials
    for profile in session.profiles:
        if not profile.allows_name(name, denials):
            return _refused(profile, name, _why_name(profile, name, denials))
        if profile.read_only and spec.read_only is False and not _judged_per_value(spec):
            return _refused(
                profile, name, "it is not read-only, and this subagent is strictly read-only"
            )
    return None


def _why_name(profile: ChildProfile, name: str, denials: Iterable[str]) -> str:
    if profile.tools is not None and not _matches(name, profile.tools):
        return "it is not among the tools this subagent may use (" + ", ".join(profile.tools) + ")"
    if profile.read_only and _matches(name, denials):
        return "a read-only subagent never runs it"
    return "this subagent's profile denies it"


def _flags(
    profile: ChildProfile, session: Session, step: Step, tool: ToolSpec, external: bool
) -> str | None:
    policy = profile.mcp_policy
    if external:
        if policy == "read_only" and (not step.read_only or step.destructive):
            return (
                "this subagent may use only MCP tools that declare readOnlyHint (on a "
                "trusted server) and are not destructive"
            )
        if policy == "not_destructive" and step.destructive:
            return "this subagent never runs a destructive MCP tool (destructiveHint)"
        return None
    if not profile.read_only or step.read_only:
        return None
    verdict = _verdict(tool, session.host.registry)
    if verdict is not None:
        return _classified_refusal(tool, step, verdict)
    return "it is not read-only, and this subagent is strictly read-only"


def _classified_refusal(
    tool: ToolSpec, step: Step, readonly_command: Callable[[str, str], str | None]
) -> str | None:
    arguments = step.call.arguments
    if arguments.get("run_in_background"):
        return "a read-only subagent runs commands in the foreground only"
    subject = tool.permission_subject
    assert subject is not None
    text = next(
        (arguments[a] for a in subject.arguments if isinstance(arguments.get(a), str)), None
    )
    if text is None:
        return "its command could not be read"
    verdict = readonly_command(text, subject.dialect)
    if verdict is not None:
        return f"the command is not read-only: {verdict}"
    step.read_only = True  # classified: judged as a read-only call from here on
    return None


def _judged_per_value(spec: ToolSpec) -> bool:
    """A tool of a plugin-supplied subject kind (a shell): a strict child keeps it and
    judges each call by the kind's read-only verdict."""
    subject = spec.permission_subject
    return subject is not None and subject.kind not in BUILTIN_KINDS


def _verdict(spec: ToolSpec, registry: Any) -> Callable[[str, str], str | None] | None:
    """The read-only verdict of the tool's plugin-supplied subject kind (the shell's)."""
    subject = spec.permission_subject
    kind = registry.subject_kinds().get(subject.kind) if subject is not None else None
    return kind.read_only if kind is not None else None


def _external(step: Step, registry: Any) -> bool:
    """A proxy's target the host does not register (an MCP tool or server)."""
    tool = step.tool
    return step.inside and tool is not None and registry.get(tool.name) is not tool


def _refused(profile: ChildProfile, name: str, why: str) -> ToolResult:
    return ToolResult.failure(
        "blocked",
        f"blocked: {name} is not allowed in this {profile.name} subagent: {why}; nothing was run",
        f"profile:{profile.name}",
        {"executed": False},
    )
