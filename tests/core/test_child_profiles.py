"""Child profiles through the pipeline: a strict read-only child runs only what reads
(files, search, classified shell lines, read-only MCP tools); allowlists, denials and
depth are enforced on every call, not only by hiding (issue 22, item 1)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import callgate_capability
import callgate_files
import callgate_search
import callgate_shell
import pytest
from callgate import ChildProfile, ToolError
from callgate_commandline import readonly_command

from tests.plugins.capability.helpers import calls_of, config, fixture_server, mcp_children

STRICT = ChildProfile(name="explore", read_only=True)
PLUGINS = [callgate_files, callgate_search, callgate_shell, callgate_capability]


def _repo(path: Path) -> None:
    env = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_SYSTEM": "/dev/null",
        "PATH": "/usr/bin:/bin",
    }
    for cmd in (
        ["git", "init", "-q", "-b", "main"],
        ["git", "add", "a.txt"],
        ["git", "-c", "user.email=t@e.invalid", "-c", "user.name=T", "commit", "-q", "-m", "one"],
    ):
        subprocess.run(cmd, cwd=path, check=True, env=env)


@pytest.fixture
def parent(callgate_session, tmp_path):
    s = callgate_session(
        plugins=PLUGINS,
        files={"a.txt": "alpha\nbeta\n"},
        config=config(tmp_path, {"fixture": fixture_server(tmp_path)}),
    )
    _repo(s.workspace)
    return s


def _blocked(result, profile: str = "explore") -> None:
    assert result.is_error and result.error.kind == "blocked", result.text
    assert result.error.signature == f"profile:{profile}"
    assert "nothing was run" in result.text


@pytest.mark.parametrize(
    "command",
    [
        "touch x",
        "echo hi > x",
        "git commit -m x --allow-empty",
        "rm a.txt",
        "git status && touch x",
        "eval ls",
        "sudo ls",
        "find . -delete",
        "ls | tee x",
        "git -c core.pager=touch log",
        "sort -o x a.txt",
    ],
)
def test_a_strict_child_refuses_writing_commands_and_changes_nothing(parent, command):
    child = parent.child(STRICT)
    before = parent.snapshot()
    _blocked(child.call("bash", {"command": command}))
    parent.assert_unchanged(before)


def test_a_strict_child_refuses_write_file_and_destructive_tools(parent):
    child = parent.child(STRICT)
    child.expect_ok("read_file", {"path": "a.txt"})  # observed in the child's own ledger
    before = parent.snapshot()
    for name, args in (
        ("write_file", {"path": "x", "content": "x"}),
        ("edit_file", {"path": "a.txt", "old_string": "alpha", "new_string": "gamma"}),
        ("bash", {"command": "ls", "run_in_background": True}),
    ):
        _blocked(child.call(name, args))
    # through the proxy too: tool:write_file is not in the child at all
    r = child.call(
        "use_capability",
        {
            "action": "call",
            "capability_id": "tool:write_file",
            "arguments": {"path": "x", "content": "x"},
        },
    )
    assert r.is_error and r.meta.get("executed") is False, r.text
    parent.assert_unchanged(before)
    assert "write_file" not in child.session.tool_names()  # and hidden, as a convenience


def test_a_strict_child_runs_reads_git_status_and_grep(parent):
    child = parent.child(STRICT)
    assert "On branch main" in child.expect_ok("bash", {"command": "git status"})
    assert "one" in child.expect_ok("bash", {"command": "git log --oneline | head -1"})
    assert "a.txt" in child.expect_ok("grep", {"pattern": "beta"})
    assert "alpha" in child.expect_ok("bash", {"command": "cat a.txt 2>/dev/null"})


def test_a_strict_child_uses_read_only_mcp_tools_on_the_parents_server(parent, tmp_path):
    def uc(s, cap, **args):
        return s.call("use_capability", {"action": "call", "capability_id": cap, "arguments": args})

    assert not uc(parent, "mcp-server:fixture").is_error
    [server] = mcp_children()
    pid_parent = uc(parent, "mcp-tool:fixture/pid").text
    child = parent.child(STRICT)
    assert uc(child, "mcp-tool:fixture/echo", text="hi").text == "hi"
    assert uc(child, "mcp-tool:fixture/pid").text == pid_parent == str(server)
    _blocked(uc(child, "mcp-tool:fixture/wipe"))
    _blocked(uc(child, "mcp-tool:fixture/write_note", text="x"))
    assert [c["name"] for c in calls_of(tmp_path)] == ["pid", "echo", "pid"]
    assert list(mcp_children()) == [server]  # one process for parent and child
    child.close()
    assert list(mcp_children()) == [server]  # the child's close leaves the parent's server


def test_an_allowlist_is_enforced_through_the_proxy_too(parent):
    child = parent.child(ChildProfile(name="narrow", tools=["read_*", "g*"]))
    assert sorted(child.session.tool_names()) == ["glob", "grep", "read_file"]
    child.expect_ok("read_file", {"path": "a.txt"})
    # not listed: refused with the reason, and the proxy is not listed either
    _blocked(child.call("bash", {"command": "ls"}), "narrow")
    _blocked(
        child.call(
            "use_capability",
            {"action": "call", "capability_id": "tool:bash", "arguments": {"command": "ls"}},
        ),
        "narrow",
    )
    assert child.session.tool("bash") is None


def test_an_allowlist_judges_the_tool_a_proxy_runs(parent):
    child = parent.child(ChildProfile(name="viaproxy", tools=["use_capability", "read_file"]))
    child.expect_ok(
        "use_capability",
        {"action": "call", "capability_id": "tool:read_file", "arguments": {"path": "a.txt"}},
    )
    before = parent.snapshot()
    r = child.call(
        "use_capability",
        {
            "action": "call",
            "capability_id": "tool:write_file",
            "arguments": {"path": "x", "content": "x"},
        },
    )
    assert r.is_error and r.meta.get("executed") is False, r.text
    parent.assert_unchanged(before)


def test_the_pipeline_refuses_what_the_surface_would_hide(parent):
    """Hiding is not the guard: a tool the child still has is judged per call."""
    child = parent.child(ChildProfile(name="nowrite", denied=["write_*"]))
    state = child.session.state  # what the pipeline runs on: give it the tool anyway
    state.tools["write_file"] = parent.session.tool("write_file")
    state.visible = state.visible | {"write_file"}
    before = parent.snapshot()
    _blocked(child.call("write_file", {"path": "x", "content": "x"}), "nowrite")
    parent.assert_unchanged(before)


def test_profiles_narrow_down_the_family(parent):
    strict = parent.child(STRICT)
    wide = strict.child(ChildProfile(name="wide"))  # asks for nothing, keeps the parent's
    assert wide.session.depth == 2
    _blocked(wide.call("write_file", {"path": "x", "content": "x"}))


def test_nesting_stops_when_no_depth_remains(parent):
    one = parent.child(ChildProfile(max_depth=2))
    two = one.child()
    assert (one.session.depth, two.session.depth) == (1, 2)
    assert not two.session.can_open_child
    with pytest.raises(ToolError) as info:
        two.child()
    assert info.value.signature == "profile:max_depth"
    # a root with no profile nests three levels by default
    assert parent.child().child().child().session.depth == 3


def test_profile_values_are_checked():
    with pytest.raises(ValueError):
        ChildProfile(max_depth=0)
    with pytest.raises(ValueError):
        ChildProfile(mcp="sometimes")
    with pytest.raises(TypeError):
        ChildProfile(tools="read_file")


@pytest.mark.parametrize(
    "line",
    [
        "git status",
        "git diff HEAD~1 -- a.txt",
        "ls -la | wc -l",
        "grep -rn foo . | head",
        "timeout 5 git log -3",
        "find . -name '*.py' -exec grep -l x {} +",
        "cat a 2>/dev/null",
        "git branch -a",
        "cd src && ls",
    ],
)
def test_read_only_lines(line):
    assert readonly_command(line) is None


@pytest.mark.parametrize(
    "line",
    [
        "touch x",
        "echo > x",
        "git commit",
        "git branch new",
        "find . -exec rm {} ;",
        "$CMD",
        "ls $(rm x)",
        "sed -i s/a/b/ f",
        "git diff --output=x",
        "python -c 'print(1)'",
        "xargs rm",
        "sort -no out f",
        "bash -c 'ls'",
        "git config user.name x",
        "unterminated 'quote",
        "rg --pre ./x foo",
        "doas cat f",
        "git -C sub status",  # no git global option but --no-pager (issue 30)
    ],
)
def test_lines_that_are_not_read_only(line):
    assert readonly_command(line) is not None
    assert readonly_command(line, "pwsh") is not None


def test_the_proxy_cannot_launder_a_writing_command(parent):
    child = parent.child(STRICT)
    before = parent.snapshot()
    r = child.call(
        "use_capability",
        {"action": "call", "capability_id": "tool:bash", "arguments": {"command": "touch x"}},
    )
    _blocked(r)
    parent.assert_unchanged(before)
    r = child.call(
        "use_capability",
        {"action": "call", "capability_id": "tool:bash", "arguments": {"command": "git status"}},
    )
    assert "On branch main" in r.text, r.text


def test_a_read_only_tool_a_plugin_denies_to_strict_children_is_refused(callgate_session):
    """``ask`` is read-only, yet a strict child never asks: the tasks plugin names it."""
    import callgate_tasks
    from callgate import ToolSpec, hookimpl

    asked = []

    class Ask:
        __name__ = "test_ask"

        @hookimpl
        def callgate_register_tools(self, registry):
            registry.add(
                ToolSpec(
                    name="ask",
                    description="Ask the user.",
                    read_only=True,
                    visibility="surface",
                    schema={"type": "object", "properties": {}, "additionalProperties": False},
                    execute=lambda ctx, args: asked.append(1) or "answered",
                )
            )

    s = callgate_session(plugins=[callgate_tasks, Ask()])
    s.expect_ok("ask", {})
    child = s.child(STRICT)
    _blocked(child.call("ask", {}))
    assert asked == [1]
    assert s.child(ChildProfile(name="loose")).expect_ok("ask", {}) == "answered"
