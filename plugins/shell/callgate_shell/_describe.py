"""The parts of the shell tools' descriptions that depend on what else the host offers.

A description must not send the model to a tool it cannot call. Which file tools
exist, which of them are on the model's tool list and which it reaches only
through ``use_capability``, and whether any language-server (``lsp_*``) tool is
registered are known once the host has booted; `file_tools_advice` and
`symbols_advice` say exactly that much.
"""

from __future__ import annotations

#: The dedicated file tools, in the order the advice names them.
FILE_TOOLS = ("grep", "glob", "ls", "read_file", "edit_file", "move_file")
PROXY = "use_capability"


def file_tools_advice(registered: frozenset[str], visible: frozenset[str],
                      shell_commands: str) -> str:
    """"Use the dedicated tools … rather than <shell_commands>", naming only tools that
    exist, and saying which are reached through use_capability."""
    direct = [t for t in FILE_TOOLS if t in visible]
    proxied = [t for t in FILE_TOOLS if t in registered and t not in visible] \
        if PROXY in visible else []
    if not direct and not proxied:
        return ""
    parts = [_and(direct)] if direct else []
    if proxied:
        verb = "is" if len(proxied) == 1 else "are"
        parts.append(f"{_and(proxied)} {verb} reached through use_capability, e.g. "
                     f"capability_id tool:{proxied[0]}")
    return (f" To search, read, list, edit or move files, use the dedicated tools "
            f"({'; '.join(parts)}) rather than {shell_commands} in the shell: they behave the "
            "same on every OS.")


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def symbols_advice(registered: frozenset[str]) -> str:
    """Where to start with symbol questions: only tools that are registered (the lsp_* ones
    only when a language-server plugin added one)."""
    starts = ["the lsp_* tools"] if any(n.startswith("lsp_") for n in registered) else []
    if "read_file" in registered:
        starts.append("read_file")
    if "grep" in registered:
        starts.append("a targeted grep")
    if not starts:
        return ""
    return f" For symbols and architecture questions, start with {_and(starts)}."


__all__ = ["FILE_TOOLS", "file_tools_advice", "symbols_advice"]
