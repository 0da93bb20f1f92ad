"""The ``[capability]`` and ``[mcp_servers.<name>]`` tables, and one server's settings.

A server's *identity* (name, command, args, env names, absolute cwd) keys its
schema cache and is re-checked right before every connect and call: a change
means the approval was for something else (capability.md §5).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import sys
from collections.abc import Mapping
from typing import Any

import attrs

from ._names import SERVER_NAME

CAPABILITY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        # "" means the user cache directory + /callgate. The cache holds the annotations
        # deferred calls are judged by: a workspace config may not point it elsewhere.
        "cache_dir": {"type": "string", "default": "", "x-workspace": "user", "x-kind": "path"},
    },
}

#: What a child gets from callgate's environment by default besides the SDK's own few
#: (HOME, LOGNAME, PATH, SHELL, TERM, USER): the certificate and proxy settings that
#: ``uvx``/``npx`` launchers need to download a server, and the locale. No credentials.
DEFAULT_ENV_PASSTHROUGH: tuple[str, ...] = (
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY",
    "https_proxy", "http_proxy", "no_proxy", "all_proxy", "LANG", "LC_ALL", "TMPDIR")

#: ``x-workspace`` (callgate's config layering): a workspace config the user config does not
#: trust may switch a user's server off or shorten its timeouts, never change what it runs;
#: a server it adds is taken whole but flagged (`ServerConfig.from_untrusted_workspace`), so
#: its tools relax nothing and starting it always asks, showing the command.
SERVER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["command"],
    "properties": {
        "command": {"type": "string", "minLength": 1, "x-workspace": "user",
                    "x-kind": "program"},
        "args": {"type": "array", "items": {"type": "string"}, "default": [],
                 "x-workspace": "user", "x-kind": "program"},
        "env": {"type": "object", "additionalProperties": {"type": "string"}, "default": {},
                "x-workspace": "user", "x-kind": "env"},
        "env_passthrough": {"type": "array", "uniqueItems": True, "maxItems": 64,
                            "items": {"type": "string",
                                      "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                            "default": list(DEFAULT_ENV_PASSTHROUGH), "x-workspace": "user",
                            "x-kind": "env"},
        "cwd": {"type": "string", "default": "", "x-workspace": "user", "x-kind": "path",
                "x-relative-to": "workspace"},
        "enabled": {"type": "boolean", "default": True, "x-workspace": [True, False]},
        "auto_start": {"type": "boolean", "default": False, "x-workspace": [True, False],
                       "x-kind": "scope"},
        "startup_timeout_s": {"type": "number", "minimum": 1, "maximum": 300, "default": 30,
                              "x-workspace": "min", "x-kind": "limit"},
        "call_timeout_s": {"type": "number", "minimum": 1, "maximum": 3600, "default": 120,
                           "x-workspace": "min", "x-kind": "limit"},
        "trusted": {"type": "boolean", "default": True, "x-workspace": [True, False],
                    "x-kind": "scope"},
    },
}

#: ``"add"``: a workspace config the user config does not trust may add servers (see above).
MCP_SERVERS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "propertyNames": {"pattern": SERVER_NAME.pattern, "maxLength": 64},
    "additionalProperties": SERVER_SCHEMA,
    "x-workspace": "add",
}

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@attrs.frozen(kw_only=True)
class ServerConfig:
    """One configured MCP server, with ``cwd`` made absolute."""

    name: str
    command: str
    args: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    env: Mapping[str, str] = attrs.field(factory=dict, converter=lambda v: dict(sorted(v.items())))
    cwd: str
    #: variables copied from callgate's environment when set there (``env`` wins)
    env_passthrough: tuple[str, ...] = attrs.field(default=DEFAULT_ENV_PASSTHROUGH,
                                                   converter=tuple)
    enabled: bool = True
    auto_start: bool = False
    startup_timeout_s: float = 30
    call_timeout_s: float = 120
    trusted: bool = True
    #: defined only by a workspace config the user config does not trust: every connect
    #: needs approval and its annotations are not trusted (`_policy`)
    from_untrusted_workspace: bool = False

    @property
    def identity(self) -> str:
        """SHA-256 hex of the canonical JSON of what decides which process runs (read
        several times per proxied call: remembered by what it is made of)."""
        return _identity(self.name, self.command, tuple(self.args), tuple(sorted(self.env)),
                         self.cwd)

    def expanded_env(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """``env`` with ``${VAR}`` taken from the host environment, over the
        ``env_passthrough`` variables the host environment has.

        Raises `MissingVariable` naming the key and the variable, never a value.
        """
        source = os.environ if environ is None else environ
        out: dict[str, str] = {k: source[k] for k in self.env_passthrough
                               if k in source and k not in self.env}
        for key, value in self.env.items():
            def substitute(match: re.Match[str], key: str = key) -> str:
                var = match.group(1)
                if var not in source:
                    raise MissingVariable(key, var)
                return source[var]
            out[key] = _VAR.sub(substitute, value)
        return out


class MissingVariable(Exception):
    """An ``env`` value refers to a variable the host environment does not have."""

    def __init__(self, key: str, var: str) -> None:
        super().__init__(f"env {key} uses ${{{var}}}, which is not set in callgate's "
                         "environment")
        self.key = key
        self.var = var


def server_config(name: str, table: Mapping[str, Any], workspace_root: str, *,
                  from_untrusted_workspace: bool = False) -> ServerConfig:
    """A `ServerConfig` from a validated ``[mcp_servers.<name>]`` table; one an untrusted
    workspace config added is never ``trusted``, whatever it says."""
    cwd = table.get("cwd") or ""
    absolute = os.path.normpath(os.path.join(workspace_root, os.path.expanduser(cwd)))
    return ServerConfig(
        name=name, command=table["command"], args=table.get("args", []),
        env=table.get("env", {}), cwd=absolute, enabled=table.get("enabled", True),
        env_passthrough=table.get("env_passthrough", DEFAULT_ENV_PASSTHROUGH),
        auto_start=table.get("auto_start", False),
        startup_timeout_s=table.get("startup_timeout_s", 30),
        call_timeout_s=table.get("call_timeout_s", 120),
        trusted=table.get("trusted", True) and not from_untrusted_workspace,
        from_untrusted_workspace=from_untrusted_workspace,
    )


def user_cache_dir() -> str:
    """The platform's per-user cache directory (no third-party dependency)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
    elif sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return base


def cache_dir(capability_table: Mapping[str, Any]) -> str:
    configured = capability_table.get("cache_dir") or ""
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    return os.path.join(user_cache_dir(), "callgate")


@functools.lru_cache(maxsize=256)
def _identity(name: str, command: str, args: tuple[str, ...], env_names: tuple[str, ...],
              cwd: str) -> str:
    doc = {"name": name, "command": command, "args": list(args), "env_names": list(env_names),
           "cwd": cwd}
    raw = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(raw.encode()).hexdigest()
