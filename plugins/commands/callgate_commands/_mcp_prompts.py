"""Prompts of configured MCP servers as ``mcp:<server>:<prompt>`` commands.

The servers are the capability plugin's ``[mcp_servers.<s>]`` tables, read
through ``session.extension(MCP_SERVERS)`` (its configs: command, args, env, cwd, trust).
*Listing* starts nothing: it shows the prompts remembered from an earlier
connect (``<state>/commands/mcp-prompts/<identity>.json``, keyed by the server's
identity, so a changed command line forgets them), and for a server never
connected, one line saying how to list it. *Expanding* ``mcp:<s>:<p>`` (or
listing ``mcp:<s>``) connects: the call is judged by the same check as a
connect of ``<s>`` (``session.extension(MCP_SERVERS).connect_decision``, the capability
plugin's one connect check: the rules for ``mcp_connect__<s>``, else the connect
fallback, and always an approval for a server an untrusted workspace config
added), then a short-lived stdio child (its own process
group, killed with it when the call ends; started through the core's door,
`callgate.process`, with the SDK's few variables plus the server's ``env``, and only
inside the sandbox for a server an untrusted workspace config defines) answers
``prompts/list`` and ``prompts/get``. Nothing in the prompt is run.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable, Mapping
from typing import Any

import attrs
from callgate import SessionKey, ToolError, process
from callgate.files import replace_file
from callgate.paths import state_dir

log = logging.getLogger("callgate.commands")

#: the capability plugin's servers, when it is loaded (a key of the same name)
MCP_SERVERS: SessionKey[Any] = SessionKey("mcp_servers")

MAX_PROMPTS = 500


@attrs.frozen
class PromptInfo:
    name: str
    description: str
    arguments: tuple[tuple[str, str, bool], ...]  # (name, description, required)

    @property
    def hint(self) -> str:
        return " ".join(f"<{a}>" if req else f"[{a}]" for a, _, req in self.arguments)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "arguments": [list(a) for a in self.arguments],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PromptInfo:
        return cls(
            str(data["name"]),
            str(data.get("description") or ""),
            tuple((str(a[0]), str(a[1]), bool(a[2])) for a in data.get("arguments", ())),
        )


def servers(session: Any) -> dict[str, Any]:
    """The enabled configured servers (``ServerConfig``s) by name; ``{}`` without the
    capability plugin."""
    registry = session.find_extension(MCP_SERVERS)
    if registry is None:
        return {}
    found = {}
    for name in registry.names():
        config = registry.config(name)
        if config is not None and getattr(config, "enabled", True):
            found[name] = config
    return found


ArgumentsFor = Callable[[PromptInfo], dict[str, str]]


# --- the prompt cache ------------------------------------------------------------------


def _cache_path(config: Any) -> str:
    digest = hashlib.sha256(str(config.identity).encode()).hexdigest()[:32]
    return os.path.join(state_dir(), "commands", "mcp-prompts", f"{digest}.json")


def cached_prompts(config: Any) -> list[PromptInfo] | None:
    try:
        with open(_cache_path(config), "rb") as fh:
            data = json.loads(fh.read())
        if data.get("identity") != config.identity:
            return None
        return [PromptInfo.from_json(p) for p in data["prompts"]]
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        log.warning("ignoring an unreadable MCP prompt cache for %s", config.name)
        return None


def save_prompts(config: Any, prompts: list[PromptInfo]) -> None:
    path = _cache_path(config)
    data = json.dumps(
        {
            "server": config.name,
            "identity": config.identity,
            "prompts": [p.to_json() for p in prompts],
        },
        indent=1,
    ).encode()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        replace_file(path, data, mode=0o600) if os.path.exists(path) else _create(path, data)
    except OSError as exc:
        log.warning("could not write the MCP prompt cache for %s: %s", config.name, exc)


def _create(path: str, data: bytes) -> None:
    from callgate.files import create_file

    try:
        create_file(path, data)
    except FileExistsError:
        replace_file(path, data, mode=0o600)


# --- talking to the server -------------------------------------------------------------


def _start_error(server: str, reason: str) -> ToolError:
    return ToolError(
        "tool_error",
        f'MCP server "{server}" could not answer: {reason}',
        f"mcp_start_failed:{server}",
        {"server": server},
    )


def _prepare(session: Any, config: Any) -> process.Prepared:
    """The server's program through the core's door (as the capability plugin starts it):
    the user's own program outside the sandbox, an untrusted workspace's only inside it."""
    try:
        env = config.expanded_env()
    except Exception as exc:  # a ${VAR} the host environment lacks
        raise _start_error(config.name, f"{type(exc).__name__}: {exc}") from None
    try:
        return process.prepare(
            session,
            [config.command, *config.args],
            workspace="write",
            network=True,
            sandbox="required" if config.from_untrusted_workspace else "off",
            because="an untrusted workspace config defines it (define it in your user "
            "config, or trust the workspace with [trust] workspaces, to run it unconfined)",
            env=process.Environment(inherit="minimal", set=env),
            cwd=config.cwd,
            purpose=f'MCP server "{config.name}"',
        )
    except FileNotFoundError:
        raise _start_error(config.name, f'command "{config.command}" was not found') from None


async def _exchange(
    prepared: process.Prepared,
    config: Any,
    prompt: str | None,
    arguments_for: ArgumentsFor | None,
    log_path: str,
) -> tuple[list[PromptInfo], Any]:
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    command, *args = prepared.argv
    params = StdioServerParameters(
        command=command, args=args, env=dict(prepared.env), cwd=prepared.cwd
    )
    os.makedirs(os.path.dirname(log_path), exist_ok=True)
    with open(log_path, "ab") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            with anyio.fail_after(float(config.startup_timeout_s)):
                await client.initialize()
                listing = await client.list_prompts()
            prompts = [
                PromptInfo(
                    p.name,
                    p.description or "",
                    tuple(
                        (a.name, a.description or "", bool(a.required)) for a in (p.arguments or ())
                    ),
                )
                for p in listing.prompts[:MAX_PROMPTS]
            ]
            answer = None
            found = next((p for p in prompts if p.name == prompt), None)
            if found is not None and arguments_for is not None:
                arguments = arguments_for(found)  # raises for missing ones: nothing asked
                with anyio.fail_after(float(config.call_timeout_s)):
                    answer = await client.get_prompt(found.name, arguments)
            return prompts, answer


def fetch(
    session: Any,
    config: Any,
    prompt: str | None,
    arguments_for: ArgumentsFor | None,
    cancelled: threading.Event,
) -> tuple[list[PromptInfo], Any]:
    """Start the server, list its prompts (and get ``prompt`` with the arguments
    ``arguments_for`` makes from its declaration), stop it. Blocking."""
    import anyio

    try:
        import mcp  # noqa: F401
    except ImportError:
        raise ToolError(
            "unavailable",
            'expanding MCP prompts needs the mcp SDK: install "callgate-commands[mcp]"',
            "unavailable:mcp",
        ) from None
    if not os.path.isdir(config.cwd):
        raise _start_error(config.name, f'working directory "{config.cwd}" does not exist')
    prepared = _prepare(session, config)
    log_path = os.path.join(session.scratch_dir(), "mcp", f"{config.name}.prompts.stderr.log")

    async def main() -> tuple[list[PromptInfo], Any]:
        async with anyio.create_task_group() as tg:
            result: list[Any] = []

            async def work() -> None:
                result.append(await _exchange(prepared, config, prompt, arguments_for, log_path))
                tg.cancel_scope.cancel()

            async def watch() -> None:
                while not cancelled.is_set():
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()

            tg.start_soon(work)
            tg.start_soon(watch)
        if not result:
            raise ToolError(
                "cancelled", f"cancelled while MCP server {config.name} answered", "cancelled"
            )
        return result[0]

    try:
        # an empty context: the worker thread inherits the host loop's context vars (sniffio
        # would say asyncio is already running here); this loop is the thread's own
        return contextvars.Context().run(anyio.run, main)
    except ToolError:
        raise
    except TimeoutError:
        raise _start_error(config.name, "it did not answer in time") from None
    except Exception as exc:
        leaf = exc
        while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
            leaf = leaf.exceptions[0]  # type: ignore[assignment]
        if isinstance(leaf, ToolError):
            raise leaf from None
        raise _start_error(config.name, f"{type(leaf).__name__}: {leaf}") from None


def prompt_text(answer: Any) -> str:
    """The text of a ``prompts/get`` answer: each message's role and text."""
    parts = []
    if getattr(answer, "description", None):
        parts.append(str(answer.description))
    for message in getattr(answer, "messages", ()) or ():
        content = message.content
        text = getattr(content, "text", None)
        if text is None:
            resource = getattr(content, "resource", None)
            text = getattr(resource, "text", None) if resource is not None else None
        if text is None:
            text = f"[{getattr(content, 'type', 'content')} not shown]"
        parts.append(f"[{message.role}]\n{text}")
    return "\n\n".join(parts)
