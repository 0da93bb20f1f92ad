"""The hook specifications of callgate's pipeline (host.md §5), and nothing else.

Plugins implement these with ``@callgate.hookimpl``. Hooks that only one
plugin family needs from the integrator (a conversation, a subagent runner,
an image describer, a command wrapper) live in that plugin's package and are
added with ``registry.add_hookspecs(module)``.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("callgate")
hookimpl = pluggy.HookimplMarker("callgate")


# --- boot ---------------------------------------------------------------------


@hookspec
def callgate_register_tools(registry, host):
    """Add tools with ``registry.add(ToolSpec(...))``. Called once per plugin at boot.

    ``registry`` also takes config tables (``registry.add_config``), session
    extensions (``registry.add_session_extension``) and plugin hook specs
    (``registry.add_hookspecs``).
    """


# --- validation and gating (one call) ----------------------------------------


@hookspec
def callgate_validate_arguments(call, tool, session):
    """Return a list of `Violation`s beyond the JSON Schema (or nothing).

    Runs only when the schema accepted the arguments, so implementations may
    rely on the schema's types. ``call.arguments`` is the decoded object.
    """


@hookspec
def callgate_pre_tool_use(call, tool, session):
    """Return `Refuse(reason)` to block the call, `Replace(arguments)` to run it
    with other arguments (validated again), or nothing."""


@hookspec
def callgate_check_permission(call, tool, session):
    """Return a `Decision` (allow / ask / deny) or nothing. Deny from any
    implementation wins over ask, ask over allow."""


@hookspec(firstresult=True)
def callgate_ask_permission(call, tool, session, preview):
    """The integrator's approver for an ``ask``: return a `Decision`, ``True``
    (allow) or ``False`` (deny). ``preview`` is the change a mutating tool
    would make, or ``None``. The first answer wins."""


# --- results --------------------------------------------------------------------


@hookspec
def callgate_shape_result(call, tool, result, session):
    """Return a replacement `ToolResult` (redacted, annotated, ...) or nothing.
    Implementations run in turn, each seeing the previous replacement."""


# --- lifecycle ------------------------------------------------------------------


@hookspec
def callgate_session_start(session):
    """A session opened (its workspace, directory and config are ready)."""


@hookspec
def callgate_session_end(session):
    """A session is closing: stop what it started (jobs, servers, watchers)."""


@hookspec
def callgate_turn_start(session, origin):
    """The integrator declared a new turn with ``session.begin_turn(origin)``;
    ``origin`` is ``"human"`` or ``"automatic"``."""
