"""Permission rules you can test: the public face of the rule engine (issue 33).

What ``[permissions]`` rules mean is the core's (`docs/permissions.md`); this module lets a
plugin or a tool use the same engine without reaching into it:

- `RuleSet`: rules that do not come from ``[permissions]`` (another agent's settings file,
  imported) judged exactly as ``[permissions]`` rules are, against a booted host's tools;
  each rule checked on its own (`RuleSet.add` raises `RuleError` for a malformed one), and
  its ``match``/``not_match`` examples judged (`RuleSet.matches`).
- `host_rules`: the rules a host booted with (``[permissions]``), in list order.
- `unit_verdicts`: what the rules say about each command a shell line runs (and each file it
  writes, each path argument), one by one.
- `explain`: every pipeline stage's verdict for one call, without running it.

``[permissions] examples`` (``match``/``not_match`` rule tests, checked at boot) are
described in `docs/permissions.md`; `RuleEngine.example_matches` is what judges them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._model.values import Decision, ToolCall
from ._permissions.rules import ACTIONS, Rule, RuleEngine, RuleError, UnitVerdict, compile_spec

if TYPE_CHECKING:
    from ._model.spec import ToolSpec
    from ._pipeline.explain import STAGES, Explanation, StageVerdict
    from ._pipeline.view import HostView as Host
    from ._pipeline.view import SessionView
    from ._session.session import Session


class RuleSet:
    """Permission rules judged as ``[permissions]`` rules are, against ``host``'s tools (and
    the names its plugins answer for: MCP tools, the other OS's shell).

    ``source`` names who decides in the `Decision` s it returns (a plugin's name). A rule
    naming no known tool is kept and listed in `warnings` (as at boot)."""

    def __init__(self, host: Host, *, source: str | None = None) -> None:
        self.source = source
        self._engine = RuleEngine(
            {},
            {s.name: s for s in host.registry.tools()},
            other_tools={s.name: s for s in host.registry.other_os_tools()},
            rule_names=[recognize for _plugin, recognize in host.registry.rule_names()],
            kinds=host.registry.subject_kinds(),
        )

    def add(self, action: str, text: str) -> Rule:
        """Add one rule to ``action``'s list (``allow``, ``ask`` or ``deny``); `RuleError`
        (nothing added) when it is malformed."""
        return self._engine.add(action, text)

    @property
    def rules(self) -> list[Rule]:
        return list(self._engine.rules)

    @property
    def warnings(self) -> list[str]:
        return list(self._engine.warnings)

    def decide(
        self, call: ToolCall, tool: ToolSpec, session: SessionView | None = None
    ) -> Decision | None:
        """What these rules say about the (effective) ``call`` of ``tool``: deny over ask over
        allow, naming the rule; ``None`` when none of them speaks."""
        if not self._engine.rules:
            return None
        found = self._engine.decide(call.name, tool, call.arguments, session)
        if found is None or self.source is None:
            return found
        return Decision(found.action, found.rule, found.reason, source=self.source)

    def matches(self, rule: Rule, example: Any, session: SessionView | None = None) -> bool:
        """Whether ``rule`` alone decides ``example`` (a deny or ask rule fires on it, an allow
        rule covers it): a string is the rule's subject as written (a command line, a
        workspace-relative path, a URL), ``{"tool": ..., "arguments": {...}}`` a whole call.
        `RuleError` when the example cannot be judged here."""
        return self._engine.example_matches(rule, example, session)

    def unit_verdicts(
        self, call: ToolCall, tool: ToolSpec, session: SessionView | None = None
    ) -> list[UnitVerdict]:
        """What these rules say about each unit of ``call`` (see `unit_verdicts`)."""
        return self._engine.unit_verdicts(call.name, tool, call.arguments, session)


def host_rules(host: Host) -> list[Rule]:
    """The ``[permissions]`` rules ``host`` booted with: deny, then ask, then allow, each list
    in its order."""
    return list(host.permissions.rules)


def host_rule_warnings(host: Host) -> list[str]:
    """The boot warnings about ``host``'s rules (unknown names, rules matching nothing)."""
    return list(host.permissions.warnings)


def unit_verdicts(session: SessionView, call: ToolCall, tool: ToolSpec) -> list[UnitVerdict]:
    """What the ``[permissions]`` rules say about each unit of the (effective) ``call``: each
    command of a shell line and each file it writes by redirection, each path argument, the
    URL. A unit no rule speaks for has ``action`` ``None``."""
    return session.host.permissions.unit_verdicts(call.name, tool, call.arguments, session)


async def explain(session: Session, call: ToolCall) -> Explanation:
    """Every stage's verdict for ``call`` in ``session`` (`Explanation`): resolve,
    validation, the pre-tool-use hooks (asked, as in a real call), permission (every hook
    and rule heard, then the fallback), the host gates (checked, nothing held), and the
    tool, which is never run."""
    from ._pipeline.explain import explain as _explain

    return await _explain(session.state, call)


def groups_of(host: Host) -> dict[str, list[str]]:
    """``{group: [tool names]}`` of every group the host's tools carry (``Edit``, ``Bash``)."""
    out: dict[str, list[str]] = {}
    for spec in [*host.registry.tools(), *host.registry.other_os_tools()]:
        for group in spec.groups:
            out.setdefault(group, []).append(spec.name)
    return out


def shell_tool(host: Host) -> ToolSpec | None:
    """The host's shell (the ``Bash`` group's tool with a command subject), if any."""
    for spec in host.registry.tools():
        subject = spec.permission_subject
        if "Bash" in spec.groups and subject is not None and subject.kind == "command":
            return spec
    return None


#: imported on first use: the explainer runs the pipeline's stages, which a plugin judging
#: rules at registration (the hooks plugin) does not need (issue 38)
_LAZY = ("STAGES", "Explanation", "StageVerdict")


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ._pipeline import explain as _explainer

    value = getattr(_explainer, name)
    globals()[name] = value
    return value


__all__ = [
    "ACTIONS",
    "STAGES",
    "Explanation",
    "Rule",
    "RuleError",
    "RuleSet",
    "StageVerdict",
    "UnitVerdict",
    "compile_spec",
    "explain",
    "groups_of",
    "host_rule_warnings",
    "host_rules",
    "shell_tool",
    "unit_verdicts",
]
