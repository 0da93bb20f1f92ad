"""callgate: a tool host for AI coding agents.

Every tool call goes through one pipeline: resolve, validate, pre-tool-use
hooks, permission, host gates, dispatch, result shaping. Tools are plugins
(pluggy, entry-point group ``callgate``); this package is the public API that
plugins and integrators use. Anything not listed in ``__all__`` here or in a
public submodule is private (every ``callgate._*`` module is).

Writing a tool::

    from callgate import Registry, ToolContext, ToolSpec, hookimpl

    def run_word_count(ctx: ToolContext, args: dict) -> str:
        return str(len(ctx.files.read_text(args["path"]).split()))

    @hookimpl
    def callgate_register_tools(registry: Registry) -> None:
        registry.add(ToolSpec(name="word_count", description="...", read_only=True,
                              schema={"type": "object", "properties": {...}},
                              execute=run_word_count))

and expose the module in your package's ``pyproject.toml``::

    [project.entry-points.callgate]
    word_count = "my_package.plugin"

Public submodules: `callgate.host` (what integrators hold: `Session`, `SessionPair`,
plugin info, execution facts, boot errors), `callgate.files` (observed reads, atomic
writes, the gate's errors), `callgate.text` (encodings and line endings),
`callgate.paths` (confinement, globs, `state_dir`), `callgate.results` (what a result
holds), `callgate.schema` (canonical schemas), `callgate.store` (the session store: its
interface, records, read API and backend kit), `callgate.permissions` (subject kinds
plugins supply to the rule engine), `callgate.rules` (permission rules you can test: rule
sets, per-command verdicts, explain), `callgate.process` (the one door for every program
a session starts), `callgate.hookspecs` (the hooks, and the answers pre-tool-use hooks
give), `callgate.native` (the provider-native faces a tool may declare), `callgate.sync`
(the blocking facade) and `callgate.testing` (the pytest fixtures). Shared code plugins
may import besides lives in the library tier (``callgate_toolkit``,
``callgate_commandline``, and ``callgate_providers``: the provider renderings of tools and
results). docs/architecture.md shows how the package is layered.
"""

import logging as _logging

from ._host.host import Host
from ._model import VERSION
from ._model.deferred import deferred
from ._model.errors import ToolError
from ._model.keys import SessionKey
from ._model.spec import ProxyRoute, Target, ToolSpec
from ._model.values import Decision, PathRole, PermissionSubject, ToolCall, ToolResult, Violation
from ._pipeline.childprofile import ChildProfile
from ._pipeline.context import ToolContext
from ._pipeline.view import HostView, SessionView
from ._registry.registry import Registry
from .hookspecs import hookimpl, hookspec

_logging.getLogger("callgate").addHandler(_logging.NullHandler())

__version__ = VERSION

__all__ = [
    "ChildProfile",
    "Decision",
    "Host",
    "HostView",
    "PathRole",
    "PermissionSubject",
    "ProxyRoute",
    "Registry",
    "SessionKey",
    "SessionView",
    "Target",
    "ToolCall",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolSpec",
    "Violation",
    "deferred",
    "hookimpl",
    "hookspec",
]
