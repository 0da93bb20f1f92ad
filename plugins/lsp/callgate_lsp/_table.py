"""Which language server covers which file: the default table and ``[lsp.servers.<lang>]``.

Each language has one server: a command (with alternatives tried in order when
the default is used), its arguments, the file extensions it covers with the
``languageId`` of each, and the install hint a missing binary is reported with.
Nothing here starts a process or downloads anything: a server is a program the user
installed (or an absolute command), found when it is needed (`search_path`): in callgate's
own environment first (``pip install basedpyright`` beside callgate puts it there, and a
GUI client that starts ``callgate serve`` by its absolute path has no such ``PATH``), then
on ``PATH``, then in the user's ``[lsp] server_paths``; never in a relative entry or a
directory inside the workspace (`callgate.process.which` drops those, whichever list
named them).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from callgate import ToolError, process


@attrs.frozen
class ServerSpec:
    """One language's server as configured: what to run and which files it covers."""

    language: str
    command: str
    args: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()
    language_ids: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    install_hint: str = ""
    env: Mapping[str, str] = attrs.field(factory=dict, hash=False)
    alternatives: tuple[tuple[str, tuple[str, ...]], ...] = ()
    initialization_options: Any = attrs.field(default=None, hash=False)
    settings: Mapping[str, Any] = attrs.field(factory=dict, hash=False)
    #: the user's ``sandbox`` for this server (``None``: what its program needs, `_guards`)
    sandbox: process.SandboxNeed | None = None

    @property
    def label(self) -> str:
        """How messages name the server: its command's base name and the language."""
        return f"{os.path.basename(self.command)} ({self.language})"

    def language_id(self, path: str) -> str:
        return self.language_ids.get(extension_of(path), self.language)

    def launch(self, session: Any = None, server_paths: Sequence[str] = ()
               ) -> tuple[str, tuple[str, ...]]:
        """The executable path and arguments to start, or `ToolError` with the install hint.
        Each command (then each alternative) is looked for along `search_path`."""
        path = search_path(server_paths)
        for command, args in ((self.command, self.args), *self.alternatives):
            found = process.which(command, session, path=path)
            if found:
                return found, args
        hint = self.install_hint or "see docs/lsp.md"
        raise ToolError("tool_error", f'language server "{self.command}" not found (looked in '
                        "callgate's environment, on PATH and in [lsp] server_paths); install "
                        f"it: {hint}", "LSP_SERVER_NOT_FOUND",
                        {"language": self.language, "command": self.command})


def own_bin_dirs() -> list[str]:
    """Where callgate's own environment keeps its programs: the scripts directory of the
    running interpreter's prefix (a virtual environment's ``bin``) and the interpreter's own
    directory."""
    dirs = [sysconfig.get_path("scripts", vars={"base": sys.prefix, "platbase": sys.prefix}),
            os.path.dirname(os.path.abspath(sys.executable))]
    return [d for d in dict.fromkeys(dirs) if d]


def search_path(server_paths: Sequence[str] = ()) -> str:
    """Where servers are looked for, in order: callgate's environment (`own_bin_dirs`), the
    host's ``PATH``, then the user's ``[lsp] server_paths`` (``~`` expanded). The door's
    `callgate.process.which` then drops relative entries and the workspace's directories."""
    entries = [*own_bin_dirs(), *os.environ.get("PATH", os.defpath).split(os.pathsep),
               *(os.path.expanduser(p) for p in server_paths)]
    return os.pathsep.join(e for e in entries if e)


def _ids(language_id: str, *exts: str) -> dict[str, str]:
    return dict.fromkeys(exts, language_id)


_TS_IDS = {**_ids("typescript", ".ts", ".mts", ".cts"), ".tsx": "typescriptreact",
           **_ids("javascript", ".js", ".mjs", ".cjs"), ".jsx": "javascriptreact"}
_C_IDS = {**_ids("c", ".c", ".h"), **_ids("cpp", ".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh",
                                          ".hxx", ".h++", ".ipp")}

#: The default servers. Every command is a binary the user installs; none is fetched.
DEFAULTS: dict[str, ServerSpec] = {s.language: s for s in (
    ServerSpec("python", "basedpyright-langserver", ("--stdio",), (".py", ".pyi"),
               install_hint="pip install basedpyright (or pyright, python-lsp-server, "
                            "jedi-language-server)",
               alternatives=(("pyright-langserver", ("--stdio",)), ("pylsp", ()),
                             ("jedi-language-server", ()))),
    ServerSpec("typescript", "typescript-language-server", ("--stdio",), tuple(_TS_IDS),
               _TS_IDS, "npm install -g typescript-language-server typescript"),
    ServerSpec("go", "gopls", (), (".go",),
               install_hint="go install golang.org/x/tools/gopls@latest"),
    ServerSpec("rust", "rust-analyzer", (), (".rs",),
               install_hint="rustup component add rust-analyzer"),
    ServerSpec("c", "clangd", (), tuple(_C_IDS), _C_IDS,
               "apt install clangd (or brew install llvm); a compile_commands.json helps"),
    ServerSpec("csharp", "csharp-ls", (), (".cs",),
               install_hint="dotnet tool install -g csharp-ls"),
    ServerSpec("java", "jdtls", (), (".java",), install_hint="brew install jdtls (or the Eclipse "
               "JDT language server release)"),
    ServerSpec("ruby", "ruby-lsp", (), (".rb",), install_hint="gem install ruby-lsp"),
    ServerSpec("php", "intelephense", ("--stdio",), (".php",),
               install_hint="npm install -g intelephense"),
    ServerSpec("lua", "lua-language-server", (), (".lua",),
               install_hint="brew install lua-language-server (or its release archive)"),
    ServerSpec("bash", "bash-language-server", ("start",), (".sh", ".bash"),
               _ids("shellscript", ".sh", ".bash"), "npm install -g bash-language-server"),
    ServerSpec("zig", "zls", (), (".zig",), install_hint="brew install zls (or its release)"),
    ServerSpec("kotlin", "kotlin-lsp", ("--stdio",), (".kt", ".kts"),
               install_hint="brew install JetBrains/utils/kotlin-lsp",
               alternatives=(("intellij-server", ()),)),
    ServerSpec("swift", "sourcekit-lsp", (), (".swift",),
               install_hint="install the Swift toolchain (it ships sourcekit-lsp)"),
    ServerSpec("haskell", "haskell-language-server-wrapper", ("--lsp",), (".hs", ".lhs"),
               install_hint="ghcup install hls"),
)}

def extension_of(path: str) -> str:
    return os.path.splitext(path)[1].lower()


class ServerTable:
    """The servers of one host: the defaults with ``[lsp.servers]`` applied, by extension."""

    def __init__(self, overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        specs = dict(DEFAULTS)
        for language, table in (overrides or {}).items():
            if table.get("enabled") is False:
                specs.pop(language, None)
                continue
            specs[language] = _merged(language, specs.get(language), table)
        claimed: dict[str, ServerSpec] = {}
        configured = set(overrides or ())
        # the defaults first, so a configured language's extensions win over a default's
        for spec in sorted(specs.values(), key=lambda s: s.language in configured):
            for ext in spec.extensions:
                claimed[ext] = spec
        self.specs = specs
        self._by_ext = claimed

    def for_path(self, path: str) -> ServerSpec | None:
        return self._by_ext.get(extension_of(path))

    def require(self, path: str, display: str) -> ServerSpec:
        """The server covering ``path``, or `ToolError` naming the extension."""
        spec = self.for_path(path)
        if spec is None:
            ext = extension_of(path) or "(no extension)"
            raise ToolError("tool_error", f"no language server configured for {ext} files "
                            f"({display}); add one under [lsp.servers.<language>] (see "
                            "docs/lsp.md)", "LSP_NO_SERVER", {"extension": ext})
        return spec


def _merged(language: str, base: ServerSpec | None, table: Mapping[str, Any]) -> ServerSpec:
    if base is None:
        if "command" not in table or "extensions" not in table:
            raise ToolError("config_error", f"[lsp.servers.{language}] adds a language, so it "
                            "needs command and extensions", "LSP_CONFIG")
        base = ServerSpec(language, table["command"])
    changes: dict[str, Any] = {}
    if "command" in table:  # a configured command replaces the default's and its alternatives
        changes.update(command=table["command"], args=tuple(table.get("args", ())),
                       alternatives=())
    elif "args" in table:
        changes.update(args=tuple(table["args"]), alternatives=())
    if "extensions" in table:
        exts = tuple(e.lower() for e in table["extensions"])
        ids = {e: base.language_ids.get(e, language) for e in exts}
        changes.update(extensions=exts, language_ids=ids)
    if "language_id" in table:
        exts = changes.get("extensions", base.extensions)
        changes["language_ids"] = dict.fromkeys(exts, table["language_id"])
    for key in ("install_hint", "env", "initialization_options", "settings", "sandbox"):
        if key in table:
            changes[key] = table[key]
    return attrs.evolve(base, **changes)
