"""The hook specifications of callgate's pipeline (host.md §5), and nothing else.

Plugins implement these with ``@callgate.hookimpl`` (any subset of the
arguments, in any order). The host calls every hook through ``pm.hook``, so
``tryfirst``/``trylast``, ``wrapper=True`` (and old-style ``hookwrapper=True``)
implementations and ``pm.add_hookcall_monitoring`` work as pluggy documents
them; a hook that no plugin implements is not called.

The hooks of one call all receive the same *effective* ``call`` and ``tool``:
the decoded arguments and, when the call runs another tool (a proxy's
target, an alias's primary), that tool with its name and arguments; the call
as the model sent it is ``call.via``.

A pre-tool-use hook answers with `Refuse` (block the call) or `Replace` (run it with other
arguments); a permission hook with `callgate.Decision`.

Hooks that only one plugin family needs from the integrator (a conversation,
a subagent runner, an image describer) live in that plugin's package and are
added with ``registry.add_hookspecs(module)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

from ._model.values import Refuse, Replace

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._model.spec import ToolSpec
    from ._model.values import Decision, ToolCall, ToolResult, Violation
    from ._pipeline.launch import Confined, Launch
    from ._pipeline.view import HostView, SessionView
    from ._registry.registry import Registry
    from .process import Environment

hookspec = pluggy.HookspecMarker("callgate")
hookimpl = pluggy.HookimplMarker("callgate")


# --- boot ---------------------------------------------------------------------


@hookspec
def callgate_register_tools(registry: Registry, host: HostView) -> None:
    """Boot, once per plugin: add tools with ``registry.add(ToolSpec(...))``.

    ``registry`` also claims config tables (``registry.add_config`` returns the
    table validated, defaults applied), adds session extensions
    (``registry.add_session_extension``), plugin hook specs
    (``registry.add_hookspecs``) and permission names (``registry.add_rule_names``).
    ``host.os`` is the surface's OS. Raising fails boot, naming the plugin.
    """


# --- one call, in pipeline order ------------------------------------------------


@hookspec
def callgate_validate_arguments(
    call: ToolCall, tool: ToolSpec, session: SessionView
) -> list[Violation] | None:
    """Step 2, after the JSON Schema and the tool's own ``validate`` accepted the arguments
    (so implementations may rely on the schema's types).

    Return `Violation`s (the call is then an unexecuted ``invalid_arguments``
    result) or nothing. Also asked while diagnosing an invalid call (whether an
    inner object would be valid), so it must not have side effects.
    """


@hookspec
def callgate_pre_tool_use(
    call: ToolCall, tool: ToolSpec, session: SessionView
) -> Refuse | Replace | None:
    """Step 3, when the call's turn in its batch has come, before permission.

    Return `Refuse(reason)` to block the call (``blocked: <reason>``, signature
    ``hook:<plugin>``), `Replace(arguments)` to run it with other arguments
    (validated again; invalid ones are refused and the tool never runs), or
    nothing, or an awaitable of one (a hook that runs a program first: it is awaited in
    its turn, and once a `Refuse` decides, the answers after it are closed unawaited).
    Every implementation sees the call as it came. It runs on the host, also when the
    session's calls run on a worker.
    """


@hookspec
def callgate_check_permission(
    call: ToolCall, tool: ToolSpec, session: SessionView
) -> Decision | None:
    """Step 4, after Plan mode, beside the ``[permissions]`` rules.

    Return a `Decision` (allow / ask / deny) or nothing. Over every answer and
    the rules, deny wins over ask, ask over allow; no answer at all leaves the
    fallback (allow for read-only tools, else the target's or ``[permissions] mode``).
    """


@hookspec(firstresult=True)
def callgate_ask_permission(
    call: ToolCall, tool: ToolSpec, session: SessionView, preview: Any
) -> Decision | bool | None:
    """Step 4, when the decision is ``ask``: the integrator's approver. The first answer
    wins.

    Return a `Decision`, ``True`` (allow) or ``False`` (deny), or an awaitable of
    one; ``None`` means "cannot answer" and ``[permissions] ask_without_approver``
    decides. ``preview`` is the change a mutating tool would make, or ``None``.
    """


# --- after the tool ---------------------------------------------------------------


@hookspec
def callgate_post_tool_use(
    call: ToolCall, tool: ToolSpec, result: ToolResult, session: SessionView
) -> ToolResult | None:
    """Step 6b, right after the tool ran (or a host gate refused it), before the batch is
    shaped: for calls that were dispatched only (a refused, denied or invalid call never
    gets here). It runs on the host, with the session's policy, also when the session's
    calls run on a worker (docs/executors.md).

    Return a replacement `ToolResult` (feedback appended, output rewritten), nothing, or an
    awaitable of either. Every implementation sees the tool's result; the last replacement
    in call order is used. An exception is logged and changes nothing (a `ToolError` becomes
    the result).
    """


# --- results --------------------------------------------------------------------


@hookspec
def callgate_shape_result(
    call: ToolCall, tool: ToolSpec, result: ToolResult, session: SessionView
) -> ToolResult | None:
    """Step 7, for every result of a call that named a tool, successful or not, in call
    order once the whole batch has its results.

    Return a replacement `ToolResult` (redacted, annotated) or nothing. Every
    implementation sees the tool's result; the last replacement in call order is
    used (to build on another plugin's, implement a wrapper: it sees the outcome).
    The host's truncation and notices come after.
    """


@hookspec
def callgate_results_delivered(call_ids: Sequence[str], session: SessionView) -> None:
    """A batch's results were shaped and handed back to the caller (the model sees them
    from now on): the ids of its calls, in call order, once per batch, after every
    ``callgate_shape_result`` of the batch.

    Called where the session's tools run: in this process for a local session, on its
    worker for a remote one (the host sends the word after each batch, before the next
    batch's calls; docs/executors.md). A plugin that waits until the model has seen an
    id it returned (the shell's finished-job notice) counts here, not in shaping, which
    runs on the host.
    """


# --- programs -------------------------------------------------------------------


@hookspec(firstresult=True)
def callgate_confine_process(launch: Launch, session: SessionView) -> Confined | None:
    """Confine one program a session starts (`callgate.process`): every shell command,
    background job, language server, MCP server, ``rg`` and ``git`` comes through here.

    ``launch`` says what to start (``argv``, ``env``, ``cwd``), how it may use the
    workspace (``workspace``: ``"read"`` or ``"write"``), whether it wants the network,
    what it is for (``purpose``) and the call that starts it. Return a
    `callgate.process.Confined` (the wrapped argv, env and cwd, and an optional ``note``
    that explains a failure the sandbox caused), ``None`` when this session runs programs
    unconfined, or raise `ToolError` to refuse it. The first answer wins. A program killed
    through its process group must take everything it started with it. ``contrib/sandbox``
    implements it (bubblewrap).
    """


@hookspec
def callgate_program_environment(host: HostView) -> Environment | None:
    """How this plugin builds the environment of the programs it starts for the model
    (`callgate.process.Environment`), under the host's config. A session whose tools run on
    a worker (docs/executors.md) hands the worker, in its handshake, the host variables one
    of these passes and the executor's transport does not: secret-looking ones only when
    the user's config lets a plugin pass them (``[shell] filter_secret_env = false``). The
    worker's own filters then apply as they do here.
    """


# --- lifecycle ------------------------------------------------------------------


@hookspec
def callgate_session_start(session: SessionView) -> None:
    """A session opened: its workspace, directory and config are ready."""


@hookspec
def callgate_session_end(session: SessionView) -> None:
    """A session is closing: stop what it started (jobs, servers, watchers). Runs in a worker
    thread; an exception is logged, never raised."""


@hookspec
def callgate_turn_start(session: SessionView, origin: str) -> None:
    """The integrator declared a new turn with ``session.begin_turn(origin)``; ``origin`` is
    ``"human"`` or ``"automatic"``."""


__all__ = ["Refuse", "Replace", "hookimpl", "hookspec"]
