"""The ``bash`` tool (POSIX hosts): one command per call in a fresh, non-interactive bash."""

from __future__ import annotations

from collections.abc import Iterable

from callgate import PermissionSubject, ToolSpec, deferred

from .._describe import file_tools_advice, symbols_advice
from .schema import command_schema

#: what other agents and plain words call this tool (an unknown call by one of
#: these names is answered "did you mean" this tool)
BASH_KNOWN_AS = (
    "Bash", "shell", "sh", "zsh", "terminal", "run_shell_command", "execute_command",
    "run_command", "exec_command", "local_shell", "run_terminal_cmd", "pwsh", "powershell", "cmd",
)

_LEAD = (
    "Run one command with bash and get back its stdout and stderr combined, in the order "
    "they were written, followed by a status line with the exit code. Use it for builds, "
    "tests, git, package managers and other programs."
)
_TAIL = (
    " Every call is a fresh process in the workspace root with empty stdin: cd and export do "
    "not carry over, and nothing can wait for input. timeout_ms (default 120000, at most "
    "600000) ends the whole process tree. run_in_background=true starts a job and returns its "
    "bash-N id at once; read it with job_output and stop it with job_kill."
)


def describe(registered: frozenset[str], visible: frozenset[str]) -> str:
    """bash's description on this host: the file tools and lsp_* tools it really has."""
    return (_LEAD + file_tools_advice(registered, visible, "grep/cat/ls/find/sed/mv")
            + symbols_advice(registered) + _TAIL)


#: The description on a host with every file tool on the surface and no lsp_* tool.
_FILE_TOOLS = frozenset({"grep", "glob", "ls", "read_file", "edit_file", "move_file"})
DESCRIPTION = describe(_FILE_TOOLS, _FILE_TOOLS)


def bash_argv(executable: str, command: str) -> list[str]:
    """No login shell, not interactive: nothing from profiles or rc files."""
    return [executable, "-c", command]


def bash_tool(executable: str, platforms: Iterable[str] = ("posix",)) -> ToolSpec:
    """The ``bash`` tool, running ``executable`` (looked up at boot). Declared data: its code
    (`command.run_shell`) is imported by the first call."""
    return ToolSpec(
        name="bash", known_as=BASH_KNOWN_AS,
        description=DESCRIPTION,
        describe=describe,
        schema=command_schema(description_required=False),
        execute=deferred("callgate_shell.tools.command:run_shell", "bash", executable),
        read_only=False,
        visibility="surface",
        surface_order=10,
        validate=deferred("callgate_shell.tools.command:blank_command"),
        permission_subject=PermissionSubject("command", ("command",)),
        groups=("Bash",),
        platforms=frozenset(platforms),
    )
