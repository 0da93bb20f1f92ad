"""What keeps a language server from running the workspace's code (issue 30).

A language server runs with the workspace as its working directory and reads the
project, which the model and a cloned repository control. Three measures apply:

- **Everything runs through the core's door** (`callgate.process`): the session's sandbox
  (the workspace read-only, no network) where one works, the host's environment without
  secrets, a ``PATH`` without relative entries or workspace directories.
- **Program paths are pinned to the user's installs.** typescript-language-server would
  load ``node_modules/typescript/lib/tsserver.js`` from the workspace: it is given the
  TypeScript installed beside it (``tsserver.path``), and automatic type acquisition (which
  runs npm) is off. basedpyright and pyright run the workspace's ``.venv/bin/python`` to
  find search paths: where no sandbox confines them, they are given the user's ``python3``
  (``python.pythonPath``). gopls gets ``GOTOOLCHAIN=local`` (a go.mod cannot make it
  download and run another Go toolchain); confined, its caches go to the sandbox's private
  ``/tmp`` (``XDG_CACHE_HOME``: the home directory is read-only there).
- **Servers that run the project's code by design need the sandbox.** Where none works,
  they are refused (``SANDBOX_REQUIRED``), not started: `GUARDS` says which and why. A
  server the user configures is judged by its program the same way; the user may accept
  running it unconfined with ``[lsp.servers.<lang>] sandbox = "if_available"`` (or demand
  the sandbox for any server with ``"required"``).
"""

from __future__ import annotations

import copy
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from callgate import ToolError, process

from ._table import ServerSpec


@attrs.frozen
class Guard:
    """What one server program needs: ``sandbox`` (``"required"``: it runs the project's
    code by design; ``because`` says how) and the environment it must have."""

    sandbox: process.SandboxNeed = "if_available"
    because: str = ""
    env: Mapping[str, str] = attrs.field(factory=dict)
    #: set too when the sandbox confines it (unless the user's ``env`` sets them): caches it
    #: must write, moved into the sandbox's private ``/tmp`` (the home directory is read-only
    #: there)
    confined_env: Mapping[str, str] = attrs.field(factory=dict)


#: By the base name of the server's program.
GUARDS: dict[str, Guard] = {
    "rust-analyzer": Guard("required", "it runs the project's build scripts and proc macros "
                                       "(cargo)"),
    "jdtls": Guard("required", "it imports the project's Gradle and Maven builds, which run "
                               "build scripts"),
    "csharp-ls": Guard("required", "it evaluates the project's MSBuild files, which run "
                                   "tasks"),
    "ruby-lsp": Guard("required", "it runs Bundler on the project's Gemfile (Ruby code)"),
    "zls": Guard("required", "it runs the project's build.zig"),
    "kotlin-lsp": Guard("required", "it imports the project's Gradle build, which runs "
                                    "build scripts"),
    "intellij-server": Guard("required", "it imports the project's Gradle build, which runs "
                                         "build scripts"),
    "sourcekit-lsp": Guard("required", "it runs the package's Package.swift manifest"),
    "haskell-language-server-wrapper": Guard("required", "it runs cabal or stack, Setup.hs "
                                                         "and Template Haskell"),
    "haskell-language-server": Guard("required", "it runs cabal or stack, Setup.hs and "
                                                 "Template Haskell"),
    "lua-language-server": Guard("required", "it loads the runtime plugins a workspace's "
                                             ".luarc.json names"),
    "jedi-language-server": Guard("required", "jedi imports the workspace's compiled "
                                              "extension modules to read them"),
    "pylsp": Guard("required", "it imports the workspace's compiled extension modules "
                              "(jedi) and runs the plugins its project config enables"),
    # gopls keeps its analysis cache in the user cache directory (~/.cache/gopls, read-only
    # in the sandbox) and reports nothing without it; go's build cache is there too
    "gopls": Guard(env={"GOTOOLCHAIN": "local"},
                   confined_env={"XDG_CACHE_HOME": "/tmp/callgate-cache"}),
}
PYRIGHTS = frozenset({"basedpyright-langserver", "pyright-langserver"})
TYPESCRIPT = "typescript-language-server"


def program_name(command: str) -> str:
    name = os.path.basename(command)
    return name[:-4] if name.lower().endswith((".exe", ".cmd", ".bat")) else name


def guard_for(spec: ServerSpec, command: str) -> Guard:
    """The guard of ``command`` (the program found for ``spec``), with the user's
    ``sandbox`` setting for the server over the program's own."""
    found = GUARDS.get(program_name(command), Guard())
    if spec.sandbox is not None:
        found = attrs.evolve(found, sandbox=spec.sandbox)
    return found


# --- pinned program paths -----------------------------------------------------------------


def initialization_options(spec: ServerSpec, command: str,
                           roots: Sequence[str]) -> Any:
    """``spec.initialization_options`` with the pins its program needs (TypeScript)."""
    options = copy.deepcopy(spec.initialization_options)
    if program_name(command) != TYPESCRIPT:
        return options
    options = dict(options) if isinstance(options, Mapping) else {}
    tsserver = dict(options.get("tsserver") or {})
    path = tsserver.get("path")
    if path is None:
        path = typescript_beside(command)
        if path is None:
            raise ToolError("unavailable", f"language server {spec.label} was not started: "
                            "no TypeScript is installed beside it, and it would then load "
                            "tsserver from the workspace's node_modules (code the workspace "
                            "controls); install typescript where typescript-language-server "
                            "is (npm install -g typescript-language-server typescript), or "
                            "set [lsp.servers.typescript] initialization_options.tsserver.path "
                            "in your user config", "LSP_TSSERVER_NOT_PINNED",
                            {"language": spec.language, "executed": False})
    path = os.path.realpath(os.path.expanduser(str(path)))
    if not os.path.isfile(path) or any(_within(path, r) for r in roots):
        raise ToolError("unavailable", f"language server {spec.label} was not started: its "
                        f"tsserver ({path}) is missing or inside the workspace, and "
                        "typescript-language-server then falls back to the workspace's "
                        "node_modules; point tsserver.path at your own TypeScript",
                        "LSP_TSSERVER_NOT_PINNED", {"language": spec.language,
                                                    "executed": False})
    tsserver.update(path=path, fallbackPath=path)
    options["tsserver"] = tsserver
    options.setdefault("disableAutomaticTypingAcquisition", True)  # ATA runs npm
    return options


def typescript_beside(command: str) -> str | None:
    """The ``tsserver.js`` of the TypeScript that Node would load from
    typescript-language-server's own install (never the workspace's): the nearest
    ``node_modules/typescript`` above its real location."""
    here = os.path.dirname(os.path.realpath(command))
    while True:
        if os.path.basename(here) != "node_modules":
            candidate = os.path.join(here, "node_modules", "typescript")
            tsserver = os.path.join(candidate, "lib", "tsserver.js")
            if os.path.isfile(tsserver) and _is_typescript(candidate):
                return tsserver
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _is_typescript(package: str) -> bool:
    try:
        with open(os.path.join(package, "package.json"), encoding="utf-8") as fh:
            return json.load(fh).get("name") == "typescript"
    except (OSError, ValueError, AttributeError):
        return False


def settings(spec: ServerSpec, command: str, confined: bool,
             session: Any) -> Mapping[str, Any]:
    """``spec.settings`` (what ``workspace/configuration`` answers) with the pins its
    program needs: basedpyright/pyright outside the sandbox get the user's ``python3``."""
    if confined or program_name(command) not in PYRIGHTS:
        return spec.settings
    python = dict(spec.settings.get("python") or {})
    if python.get("pythonPath"):
        return spec.settings  # the user's own choice
    python["pythonPath"] = process.which("python3", session) or \
        process.which("python", session) or os.path.realpath(sys.executable)
    return {**spec.settings, "python": python}


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
