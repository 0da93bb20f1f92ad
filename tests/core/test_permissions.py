"""Permission rules and Plan mode: host.md §6, §10 statements 9, 10, 15 and 16."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest
from callgate import Decision, Host, hookimpl
from callgate._permissions.rules import compile_spec
from callgate.host import BootError, ConfigError
from callgate_commandline import COMMAND

from .permission_tools import GateTools, ProxyTools
from .plugin_dist import callgate, make_plugin


class Approver:
    """An integrator's approver that answers every ask the same way and records it."""

    def __init__(self, answer: Any) -> None:
        self.__name__ = "approver"
        self.answer = answer
        self.seen: list[tuple[str, Any, Any]] = []

    @hookimpl
    def callgate_ask_permission(self, call: Any, tool: Any, session: Any, preview: Any) -> Any:
        self.seen.append((call.name, call.arguments, preview))
        return self.answer


class HookDecider:
    """A plugin deciding through ``callgate_check_permission`` (deny > ask > allow, all sources)."""

    def __init__(self, decision: Decision) -> None:
        self.__name__ = "decider"
        self.decision = decision

    @hookimpl
    def callgate_check_permission(self, call: Any, tool: Any, session: Any) -> Decision:
        return self.decision


@pytest.fixture
def gate(callgate_session):
    """``gate(permissions, approver=None, files=None) -> (session, tools)``."""

    def open_(permissions: dict[str, Any] | None = None, *, approver: Any = None,
              files: dict[str, str] | None = None, extra: tuple[Any, ...] = ()):
        tools = GateTools()
        plugins = [tools, *extra] + ([approver] if approver is not None else [])
        config = {"permissions": permissions} if permissions is not None else {}
        return callgate_session(plugins=plugins, config=config, files=files), tools

    return open_


def signature(result: Any) -> str | None:
    return result.error.signature if result.error else None


# --- statement 9 and the precedence matrix ----------------------------------------------

STMT9 = {"mode": "ask", "deny": ["Bash(rm -rf:*)"], "allow": ["Bash(git status:*)"]}


def test_stmt9_compound_command_is_denied_by_its_rm_segment(gate) -> None:
    s, tools = gate(STMT9)
    r = s.call("bash", {"command": "git status && rm -rf x"})
    assert r.is_error and r.error.kind == "blocked"
    assert r.error.signature == "deny:Bash(rm -rf:*)"
    assert "Bash(rm -rf:*)" in r.text and '"rm -rf x"' in r.text
    assert tools.executed == []


def test_stmt9_allowed_prefix_runs(gate) -> None:
    s, tools = gate(STMT9)
    r = s.call("bash", {"command": "git status"})
    assert not r.is_error, r.text
    assert tools.executed == [("bash", {"command": "git status"})]


def test_stmt9_unmatched_command_is_refused_naming_the_missing_allow_rule(gate) -> None:
    s, tools = gate(STMT9)
    r = s.call("bash", {"command": "ls"})
    assert r.error.kind == "blocked" and r.error.signature == "mode:ask"
    assert 'allow = ["Bash(ls:*)"]' in r.text
    assert "no approver" in r.text
    assert tools.executed == []


# (tool, deny, ask, allow, mode) -> expected signature, or None when the call runs.
# job_kill is a writer without a subject, ls is read-only.
PRECEDENCE = [
    ("job_kill", [], [], [], "allow", None),
    ("job_kill", [], [], [], "ask", "mode:ask"),
    ("job_kill", [], [], [], "deny", "mode:deny"),
    ("ls", [], [], [], "ask", None),
    ("ls", [], [], [], "deny", None),
    ("job_kill", [], [], ["job_kill"], "deny", None),
    ("job_kill", [], [], ["job_kill"], "ask", None),
    ("job_kill", [], ["job_kill"], ["job_kill"], "allow", "ask:job_kill"),
    ("job_kill", [], ["job_kill"], [], "deny", "ask:job_kill"),
    ("job_kill", ["job_kill"], ["job_kill"], ["job_kill"], "allow", "deny:job_kill"),
    ("job_kill", ["job_kill"], [], ["job_kill"], "allow", "deny:job_kill"),
    ("job_kill", ["job_kill"], [], [], "allow", "deny:job_kill"),
    ("ls", ["ls"], [], [], "allow", "deny:ls"),
    ("ls", [], ["ls"], ["ls"], "allow", "ask:ls"),
    ("ls", [], [], ["ls"], "deny", None),
    ("write_file", ["Edit"], [], ["write_file"], "allow", "deny:Edit"),
    ("write_file", [], ["write_file"], ["Edit"], "allow", "ask:write_file"),
    ("write_file", [], [], ["Edit"], "deny", None),
    ("bash", [], ["Bash"], ["bash"], "allow", "ask:Bash"),
    ("bash", ["bash"], [], ["Bash"], "allow", "deny:bash"),
    ("bash", [], [], ["Bash"], "deny", None),
    ("read_file", ["read_file(secret/**)"], [], ["read_file"], "allow", None),
]
ARGS = {"job_kill": {"job_id": "j1"}, "ls": {}, "write_file": {"path": "new.txt", "content": "x"},
        "bash": {"command": "make"}, "read_file": {"path": "a.txt"}}


@pytest.mark.parametrize(("tool", "deny", "ask", "allow", "mode", "expected"), PRECEDENCE)
def test_precedence_deny_over_ask_over_allow_over_fallback(gate, tool, deny, ask, allow, mode,
                                                           expected) -> None:
    s, tools = gate({"mode": mode, "deny": deny, "ask": ask, "allow": allow},
                    files={"a.txt": "a\n"})
    r = s.call(tool, ARGS[tool])
    assert signature(r) == expected, r.text
    assert bool(tools.executed) == (expected is None)
    if expected is not None:
        assert r.error.kind == "blocked"
        rule = expected.split(":", 1)[1]
        if expected.startswith(("deny:", "ask:")):
            assert rule in r.text  # every decision names the rule that made it
    else:
        assert not r.is_error


@pytest.mark.parametrize(("answer", "runs"), [
    (True, True), (Decision("allow"), True), (False, False),
    (Decision("deny", reason="not today"), False),
])
def test_ask_goes_to_the_approver_with_the_preview(gate, answer, runs) -> None:
    approver = Approver(answer)
    s, _tools = gate({"ask": ["write_file"]}, approver=approver)
    r = s.call("write_file", {"path": "new.txt", "content": "hello"})
    assert approver.seen == [("write_file", {"path": "new.txt", "content": "hello"},
                              "+++ new.txt\nhello")]
    assert (not r.is_error) == runs, r.text
    assert s.path("new.txt").exists() == runs
    if not runs:
        assert r.error.signature == "ask:write_file"
        assert "not approved" in r.text
        if isinstance(answer, Decision):
            assert "not today" in r.text


def test_ask_without_approver_allow_lets_asks_run(gate) -> None:
    s, tools = gate({"mode": "ask", "ask_without_approver": "allow"})
    assert not s.call("job_kill", {"job_id": "j"}).is_error
    assert tools.executed == [("job_kill", {"job_id": "j"})]


def test_an_ask_rule_without_approver_names_the_ask_rule_not_an_allow_rule(gate) -> None:
    s, _ = gate({"ask": ["Bash(git push:*)"], "allow": ["Bash"]})
    r = s.call("bash", {"command": "git push origin main"})
    assert r.error.signature == "ask:Bash(git push:*)"
    assert "Bash(git push:*)" in r.text and "allow = [" not in r.text


def test_hook_decisions_combine_with_rules_deny_first(gate) -> None:
    frozen = HookDecider(Decision("deny", reason="frozen"))
    s, tools = gate({"allow": ["job_kill"]}, extra=(frozen,))
    r = s.call("job_kill", {"job_id": "j"})
    assert r.error.signature == "hook:decider" and "frozen" in r.text
    s2, tools2 = gate({"deny": ["job_kill"]}, extra=(HookDecider(Decision("allow")),))
    assert s2.call("job_kill", {"job_id": "j"}).error.signature == "deny:job_kill"
    assert tools.executed == tools2.executed == []


# --- compound commands ------------------------------------------------------------------

SHELL_RULES = {"mode": "ask", "deny": ["Bash(rm:*)"],
               "allow": ["Bash(git status:*)", "Bash(ls:*)", "Bash(echo:*)"]}


@pytest.mark.parametrize(("command", "expected"), [
    ("git status; ls -la", None),
    ("git status | ls", None),
    ("ls 2>&1 | git status", None),
    ("git  status    -s", None),
    ('ls "a && rm b"', None),
    ("echo 'x; rm y'", None),
    ("git status || rm x", "deny:Bash(rm:*)"),
    ("ls & rm x", "deny:Bash(rm:*)"),
    ("ls\nrm x", "deny:Bash(rm:*)"),
    ("(ls; rm x)", "deny:Bash(rm:*)"),
    ("echo $(rm x)", "deny:Bash(rm:*)"),
    ('echo "$(rm x)"', "deny:Bash(rm:*)"),
    ("ls `rm x`", "deny:Bash(rm:*)"),
    ("FOO=1 rm x", "deny:Bash(rm:*)"),
    ("/bin/rm x", "deny:Bash(rm:*)"),
    ("sudo rm x", "deny:Bash(rm:*)"),
    ("'rm' x", "deny:Bash(rm:*)"),
    ("if true; then rm x; fi", "deny:Bash(rm:*)"),
    ("git statusx", "mode:ask"),
    ("git status && git push", "mode:ask"),
    ("lsof", "mode:ask"),
    ("echo $(whoami)", "mode:ask"),
])
def test_compound_commands_are_judged_per_segment(gate, command, expected) -> None:
    s, tools = gate(SHELL_RULES)
    r = s.call("bash", {"command": command})
    assert signature(r) == expected, r.text
    assert bool(tools.executed) == (expected is None)


def test_refusal_lists_only_the_segments_no_rule_allows(gate) -> None:
    s, _ = gate(SHELL_RULES)
    r = s.call("bash", {"command": "git status && git push origin && make test && ls"})
    assert 'allow = ["Bash(git push:*)", "Bash(make test:*)"]' in r.text


def test_aliases_are_checked_under_their_primary_name(gate) -> None:
    s, tools = gate({"deny": ["bash"]})
    r = s.call("bash_old", {"cmd": "ls"})
    assert r.error.signature == "deny:bash" and tools.executed == []
    s2, _tools2 = gate({"deny": ["Bash(rm:*)"]})
    assert s2.call("bash_old", {"cmd": "rm -f x"}).error.signature == "deny:Bash(rm:*)"


# --- spec matching ------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "spec", "value", "matches"), [
    ("command", "git status:*", "git status", True),
    ("command", "git status:*", "git status -s", True),
    ("command", "git status:*", "git statusx", False),
    ("command", "git status:*", "git", False),
    ("command", "npm run *", "npm run build", True),
    ("command", "ls", "ls", True),
    ("command", "ls", "ls -la", False),
    ("path", "src/*.py", "src/a.py", True),
    ("path", "src/*.py", "src/sub/a.py", False),
    ("path", "src/**/*.py", "src/a.py", True),
    ("path", "src/**/*.py", "src/x/y/a.py", True),
    ("path", "src/**", "src", True),
    ("path", "src/**", "src/a/b", True),
    ("path", "src/**", "srcx/a", False),
    ("path", "?.md", "a.md", True),
    ("path", "?.md", "ab.md", False),
    ("path", "?", "/", False),
    ("path", "*", "a/b", False),
    ("path", "**", "a/b", True),
    ("path", "./src/*.py", "src/a.py", True),
    ("path", "[ab].txt", "a.txt", True),
    ("path", "[!ab].txt", "a.txt", False),
    ("path", "/etc/**", "/etc/passwd", True),
    ("path", "/etc/**", "etc/passwd", False),
    ("path", "**", "/etc/passwd", False),
    ("pattern", "TODO*", "TODO: fix", True),
    ("pattern", "*api*", "src/api/x", True),
    ("pattern", "a?c", "abc", False),
    ("url", "http://*", "http://a.test/b/c", True),
    ("url", "http://*", "https://a.test/", False),
    ("url", "domain:docs.python.org", "https://docs.python.org/3/", True),
    ("url", "domain:*.example.com", "https://a.example.com/x", True),
    ("url", "domain:example.com", "https://example.com.evil.test/", False),
])
def test_spec_matching(kind, spec, value, matches) -> None:
    assert compile_spec(kind, spec, {"command": COMMAND})(value) is matches


def test_path_rules_match_workspace_relative_paths(gate) -> None:
    s, _tools = gate({"mode": "deny", "allow": ["Edit(src/**)"]})
    assert not s.call("write_file", {"path": "src/a.py", "content": "x"}).is_error
    absolute = str(s.workspace / "src" / "b.py")
    assert not s.call("write_file", {"path": absolute, "content": "x"}).is_error
    for outside_rule in ("a.py", "src/../a.py", "srcx/a.py"):
        r = s.call("write_file", {"path": outside_rule, "content": "x"})
        assert r.error.signature == "mode:deny", outside_rule
    assert sorted(os.listdir(s.workspace)) == ["src"]
    assert sorted(os.listdir(s.workspace / "src")) == ["a.py", "b.py"]


def test_path_rules_see_through_symlinks(gate, tmp_path: Path) -> None:
    s, tools = gate({"deny": ["write_file(secret/**)"]})
    (s.workspace / "secret").mkdir()
    (s.workspace / "link").symlink_to(s.workspace / "secret")
    r = s.call("write_file", {"path": "link/x.txt", "content": "x"})
    assert r.error.signature == "deny:write_file(secret/**)"
    assert os.listdir(s.workspace / "secret") == [] and tools.executed == []
    # an allow rule must cover the resolved form too
    s2, _ = gate({"mode": "deny", "allow": ["Edit(public/**)"]})
    (s2.workspace / "public").mkdir()
    (s2.workspace / "private").mkdir()
    (s2.workspace / "public" / "door").symlink_to(s2.workspace / "private")
    assert s2.call("write_file", {"path": "public/door/x", "content": "x"}).error.signature \
        == "mode:deny"
    assert os.listdir(s2.workspace / "private") == []


def test_move_file_needs_both_ends_to_pass(gate) -> None:
    files = {"src/a.txt": "a", "protected/p.txt": "p", "free.txt": "f"}
    s, _tools = gate({"mode": "deny", "allow": ["Edit(src/**)"]}, files=files)
    r = s.call("move_file", {"source_path": "src/a.txt", "destination_path": "out/a.txt"})
    assert r.error.signature == "mode:deny" and s.path("src/a.txt").exists()
    assert 'allow = ["move_file(out/a.txt)"]' in r.text
    assert not s.path("out").exists()
    assert not s.call("move_file", {"source_path": "src/a.txt",
                                    "destination_path": "src/b.txt"}).is_error
    assert s.path("src/b.txt").read_text() == "a"

    s2, tools2 = gate({"deny": ["move_file(protected/**)"]}, files=files)
    into = s2.call("move_file", {"source_path": "free.txt", "destination_path": "protected/f"})
    out_of = s2.call("move_file", {"source_path": "protected/p.txt", "destination_path": "p"})
    assert into.error.signature == out_of.error.signature == "deny:move_file(protected/**)"
    assert tools2.executed == []
    assert s2.path("free.txt").exists() and s2.path("protected/p.txt").exists()


def test_a_left_out_directory_argument_means_the_workspace_root(gate) -> None:
    s, _tools = gate({"deny": ["ls(.)"]})
    assert s.call("ls", {}).error.signature == "deny:ls(.)"
    assert not s.call("ls", {"path": "src"}).is_error


def test_pattern_and_url_subjects(gate) -> None:
    s, _tools = gate({"deny": ["grep(*password*)", "web_fetch(domain:evil.test)",
                              "web_fetch(http://*)"]})
    assert s.call("grep", {"pattern": "password\\s*="}).error.signature == \
        "deny:grep(*password*)"
    assert not s.call("grep", {"pattern": "TODO"}).is_error
    assert s.call("web_fetch", {"url": "https://evil.test/x"}).error.signature == \
        "deny:web_fetch(domain:evil.test)"
    assert s.call("web_fetch", {"url": "http://docs.test/"}).error.signature == \
        "deny:web_fetch(http://*)"
    assert not s.call("web_fetch", {"url": "https://docs.test/"}).is_error


def test_edit_group_includes_tools_declaring_it(gate) -> None:
    s, tools = gate({"deny": ["Edit(vendor/**)"]})
    assert s.call("patch_file", {"path": "vendor/x.c"}).error.signature == \
        "deny:Edit(vendor/**)"
    assert not s.call("patch_file", {"path": "src/x.c"}).is_error
    read = s.call("read_file", {"path": "vendor/x.c"})  # not in the group: it runs
    assert read.error.kind == "not_found" and tools.executed[-1][0] == "read_file"


# --- MCP names, connects, proxies -----------------------------------------------------------

def test_stmt10_mcp_names_are_exact_and_a_glob_only_warns(gate, caplog) -> None:
    caplog.set_level(logging.WARNING, logger="callgate")
    s, _ = gate({"deny": ["mcp__srv__*"]}, extra=(ProxyTools(),))
    r = s.call("proxy", {"target": "mcp_write"})  # permission name mcp__srv__put
    assert r.error.signature == "mode:ask"  # the glob denied nothing; the fallback asked
    assert any("mcp__srv__*" in w and "not patterns" in w for w in s.host.warnings)
    assert any("mcp__srv__*" in rec.getMessage() for rec in caplog.records)
    s2, _ = gate({"deny": ["mcp__srv__put"]}, extra=(ProxyTools(),))
    assert s2.call("proxy", {"target": "mcp_write"}).error.signature == "deny:mcp__srv__put"


def test_mcp_connect_rule_blocks_the_connect(gate) -> None:
    proxy = ProxyTools()
    s, _ = gate({"deny": ["mcp_connect__srv"]}, extra=(proxy,))
    r = s.call("proxy", {"target": "connect"})
    assert r.error.signature == "deny:mcp_connect__srv" and proxy.executed == []
    assert s.host.permissions.denied_by_name("mcp_connect__srv") == "mcp_connect__srv"
    assert s.host.permissions.denied_by_name("mcp_connect__other") is None


def test_target_fallback_applies_when_no_rule_speaks(gate) -> None:
    proxy = ProxyTools()
    s, _ = gate({"allow": ["mcp__srv__put"]}, extra=(proxy,))
    assert not s.call("proxy", {"target": "mcp_write"}).is_error
    s2, _ = gate(None, extra=(ProxyTools(),))
    assert s2.call("proxy", {"target": "mcp_write"}).error.signature == "mode:ask"


# --- boot: malformed and unknown rules ---------------------------------------------------------

@pytest.mark.parametrize("rule", ["", "   ", "Bash(ls", "Bash()", "Bash( )", "Bash(:*)",
                                  "Bash(ls:*)x", "read file", "Bash(a:*b:*)", "job_kill(j1)",
                                  "Bash(ls))("])
def test_malformed_rules_fail_boot_with_the_rule_text(rule) -> None:
    with pytest.raises(ConfigError) as err:
        Host.boot({"permissions": {"allow": ["read_file", rule]}}, plugins=[GateTools()],
                  entrypoints=False)
    assert json.dumps(rule.strip() if rule.strip() else rule) in str(err.value) or \
        json.dumps(rule) in str(err.value)
    assert err.value.key == "permissions.allow[1]"


def test_malformed_rule_in_a_file_names_file_key_and_line(tmp_path: Path) -> None:
    config = tmp_path / "callgate.toml"
    config.write_text('[permissions]\nmode = "ask"\ndeny = [\n  "Bash(rm -rf:*)",\n'
                      '  "Bash(ls",\n]\n', encoding="utf-8")
    with pytest.raises(BootError) as err:
        Host.boot(config, plugins=[GateTools()], entrypoints=False)
    text = str(err.value)
    assert text.startswith(f"{config}:5: permissions.deny[1]: malformed rule \"Bash(ls\"")


def test_unknown_tool_names_warn_with_close_matches() -> None:
    host = Host.boot({"permissions": {"allow": ["raed_file", "Bsh(ls:*)", "Eddit(src/**)"]}},
                     plugins=[GateTools()], entrypoints=False)
    warnings = "\n".join(host.warnings)
    assert '"raed_file"' in warnings and "did you mean read_file" in warnings
    assert '"Bsh(ls:*)"' in warnings and "Bash" in warnings
    assert '"Eddit(src/**)"' in warnings and "did you mean Edit" in warnings  # a group


def test_names_no_tool_carries_are_answered_by_their_plugin() -> None:
    """The core knows no MCP or shell names: the plugin that owns them says what they are."""
    pytest.importorskip("callgate_capability")
    pytest.importorskip("callgate_shell")
    rules = {"allow": ["mcp__github__create_issue", "mcp_connect__time", "mcp__time__now"],
             "deny": ["pwsh(Remove-Item:*)"]}
    servers = {"time": {"command": "python"}}
    host = Host.boot({"permissions": rules, "mcp_servers": servers}, os="posix",
                     entrypoints=["capability", "shell"])
    warnings = "\n".join(host.warnings)
    assert "mcp__github__create_issue" in warnings and "'github'" in warnings
    assert "not configured in [mcp_servers]" in warnings
    assert "mcp_connect__time" not in warnings and "mcp__time__now" not in warnings
    # the other OS's shell is not registered here, yet a shared config may name it
    assert "pwsh" not in warnings
    # without the plugins that own them, the names are plain unknown tools
    bare = Host.boot({"permissions": rules}, plugins=[GateTools()], entrypoints=False)
    assert sum("which is not a registered tool" in w for w in bare.warnings) == 4


def test_a_spec_on_a_tool_without_a_subject_is_a_boot_error() -> None:
    with pytest.raises(ConfigError, match="job_kill takes no spec"):
        Host.boot({"permissions": {"deny": ["job_kill(j1)"]}}, plugins=[GateTools()],
                  entrypoints=False)


# --- statements 15 and 16: defaults and Plan mode ----------------------------------------------

def test_stmt15_no_permissions_config_and_no_approver_write_of_new_file_runs(gate) -> None:
    s, _tools = gate(None)
    r = s.call("write_file", {"path": "new.txt", "content": "hello\n"})
    assert not r.is_error, r.text
    assert s.read("new.txt") == b"hello\n"


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        out[str(path.relative_to(root))] = (path.read_bytes() if path.is_file() else b"",
                                            st.st_mtime_ns)
    return out


def test_stmt16_plan_mode_blocks_writers_until_switched_back(gate) -> None:
    s, tools = gate({"allow": ["write_file", "Bash"]}, files={"a.txt": "a\n"})
    s.sync.set_mode("plan")
    before = _snapshot(s.workspace)
    w = s.call("write_file", {"path": "new.txt", "content": "x"})
    assert w.error.kind == "blocked" and w.error.signature == "mode:plan"
    assert w.text == "blocked: the session is in plan mode; write_file is not read-only"
    assert s.call("bash", {"command": "ls"}).error.signature == "mode:plan"
    assert s.call("job_kill", {"job_id": "j"}).error.signature == "mode:plan"
    r = s.call("read_file", {"path": "a.txt"})
    assert not r.is_error and r.text == "a\n"
    assert _snapshot(s.workspace) == before
    assert [name for name, _ in tools.executed] == ["read_file"]
    s.sync.set_mode("default")
    assert not s.call("write_file", {"path": "new.txt", "content": "x"}).is_error
    assert s.read("new.txt") == b"x"


def test_plan_mode_judges_by_arguments_and_proxy_targets(gate) -> None:
    proxy = ProxyTools()
    s, _tools = gate(None, extra=(proxy,))
    s.sync.set_mode("plan")
    assert not s.call("inspect_thing", {"action": "look"}).is_error
    assert s.call("inspect_thing", {"action": "change"}).error.signature == "mode:plan"
    assert not s.call("proxy", {"target": "list"}).is_error
    assert not s.call("proxy", {"target": "read"}).is_error
    for target, name in (("write", "target_write"), ("connect", "mcp_connect__srv"),
                         ("mcp_write", "mcp__srv__put")):
        r = s.call("proxy", {"target": target})
        assert r.error.signature == "mode:plan"
        assert f"{name} is not read-only" in r.text
    assert [n for n, _ in proxy.executed] == ["proxy", "target_read"]


def test_plan_mode_rejects_unknown_modes(gate) -> None:
    s, _ = gate(None)
    with pytest.raises(ValueError):
        s.sync.set_mode("readonly")


# --- through the replay CLI ------------------------------------------------------------------

SH_PLUGIN = """
from tests.core.permission_tools import GateTools
plugin = GateTools("permtest", shell="sh")
"""


@pytest.fixture(scope="module")
def sh_env(tmp_path_factory) -> dict[str, str]:
    return make_plugin(tmp_path_factory.mktemp("permplugin"), "permtest", SH_PLUGIN)


def _replay(env: dict[str, str], workspace: Path, config: Path, lines: list[dict[str, Any]],
            *extra: str) -> list[dict[str, Any]]:
    transcript = workspace.parent / f"{workspace.name}.jsonl"
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    proc = callgate("replay", str(transcript), "--workspace", str(workspace), "--config",
                    str(config), "--surface", "full", *extra, env=env)
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_stmt9_through_replay(sh_env, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    config = tmp_path / "callgate.toml"
    config.write_text('[permissions]\nmode = "ask"\ndeny = ["Bash(rm -rf:*)"]\n'
                      'allow = ["Bash(git status:*)"]\n', encoding="utf-8")
    calls = [{"id": "c1", "name": "sh", "arguments": {"command": "git status && rm -rf x"}},
             {"id": "c2", "name": "sh", "arguments": {"command": "git status"}},
             {"id": "c3", "name": "sh", "arguments": {"command": "ls"}}]
    denied, ran, refused = _replay(sh_env, workspace, config, calls)
    assert denied["error"]["signature"] == "deny:Bash(rm -rf:*)"
    assert "Bash(rm -rf:*)" in denied["content"]
    assert ran["is_error"] is False and ran["content"] == "sh ran"
    assert refused["error"]["kind"] == "blocked" and refused["error"]["signature"] == "mode:ask"
    assert 'allow = ["Bash(ls:*)"]' in refused["content"]

    denied, ran, approved = _replay(sh_env, workspace, config, calls, "--approve", "all")
    assert denied["error"]["signature"] == "deny:Bash(rm -rf:*)"  # an approver never beats deny
    assert not ran["is_error"] and not approved["is_error"]


def test_plan_mode_through_replay(sh_env, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "a.txt").write_text("a\n")
    config = tmp_path / "callgate.toml"
    config.write_text("", encoding="utf-8")
    write, read = _replay(sh_env, workspace, config, [
        {"id": "w", "name": "write_file", "arguments": {"path": "n.txt", "content": "x"}},
        {"id": "r", "name": "read_file", "arguments": {"path": "a.txt"}}], "--mode", "plan")
    assert write["error"]["signature"] == "mode:plan" and not (workspace / "n.txt").exists()
    assert read["is_error"] is False and read["content"] == "a\n"


# --- with the real plugins ---------------------------------------------------------------------

def test_move_file_of_the_files_plugin_checks_both_ends(callgate_session) -> None:
    pytest.importorskip("callgate_files")
    files = {"src/a.txt": "a\n", "keep/k.txt": "k\n"}
    s = callgate_session(entrypoints=["files"], files=files,
                         config={"permissions": {"mode": "deny", "allow": ["Edit(src/**)"],
                                                 "deny": ["move_file(keep/**)"]}})
    assert not s.call("read_file", {"path": "src/a.txt"}).is_error
    before = _snapshot(s.workspace)
    out = s.call("move_file", {"source_path": "src/a.txt", "destination_path": "lib/a.txt"})
    assert out.error.signature == "mode:deny" and 'move_file(lib/a.txt)' in out.text
    into = s.call("move_file", {"source_path": "src/a.txt", "destination_path": "keep/a.txt"})
    assert into.error.signature == "deny:move_file(keep/**)"
    assert _snapshot(s.workspace) == before
    moved = s.call("move_file", {"source_path": "src/a.txt", "destination_path": "src/b.txt"})
    assert not moved.is_error, moved.text
    assert s.read("src/b.txt") == b"a\n" and not s.path("src/a.txt").exists()


def test_stmt15_and_stmt16_with_the_files_plugin(callgate_session) -> None:
    pytest.importorskip("callgate_files")
    s = callgate_session(entrypoints=["files"], files={"a.txt": "a\n"})
    assert not s.call("write_file", {"path": "new.txt", "content": "x\n"}).is_error
    s.sync.set_mode("plan")
    before = _snapshot(s.workspace)
    r = s.call("write_file", {"path": "plan.txt", "content": "x\n"})
    assert r.error.signature == "mode:plan" and _snapshot(s.workspace) == before
    assert not s.call("read_file", {"path": "a.txt"}).is_error
    s.sync.set_mode("default")
    assert not s.call("write_file", {"path": "plan.txt", "content": "x\n"}).is_error


def test_stmt9_with_the_shell_plugin_through_replay(tmp_path: Path) -> None:
    pytest.importorskip("callgate_shell")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "x").write_text("keep me\n")
    config = tmp_path / "callgate.toml"
    config.write_text('[permissions]\nmode = "ask"\ndeny = ["Bash(rm -rf:*)"]\n'
                      'allow = ["Bash(git status:*)"]\n', encoding="utf-8")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps({"id": f"c{i}", "name": "bash", "arguments": {
        "command": command}}) + "\n" for i, command in enumerate(
            ["git status && rm -rf x", "git status", "ls"])), encoding="utf-8")
    env = dict(os.environ, CALLGATE_LOAD_PLUGINS="shell")
    proc = callgate("replay", str(transcript), "--workspace", str(workspace), "--config",
                    str(config), "--os", "posix", env=env)
    assert proc.returncode == 0, proc.stderr
    denied, ran, refused = (json.loads(line) for line in proc.stdout.splitlines())
    assert denied["error"]["signature"] == "deny:Bash(rm -rf:*)"
    assert (workspace / "x").read_text() == "keep me\n"
    assert ran["error"] is None or ran["error"]["kind"] != "blocked"  # git ran (repo or not)
    assert refused["error"]["signature"] == "mode:ask"
    assert 'allow = ["Bash(ls:*)"]' in refused["content"]
