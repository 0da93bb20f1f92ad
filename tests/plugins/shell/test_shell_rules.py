"""Shell permission rules against the real bash (issue 16, defect 3: honest shell rules).

Every bypass that once ran past ``deny = ["Bash(touch:*)"]`` is here twice:
first with no rules, to prove it really creates the file in this bash, then
under a deny rule and an ask rule (no approver), which must refuse it with
nothing run. Redirections are judged as writes by ``Edit`` rules.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix" or shutil.which("bash") is None,
                                reason="bash end-to-end tests need POSIX and bash")

#: (id, command): each one, run by bash in the workspace root, creates the file ``x``.
BYPASSES = [
    ("bash -c", "bash -c 'touch x'"),
    ("sh -c", "sh -c 'touch x'"),
    ("eval", "eval touch x"),
    ("ansi-c quote", "$'touch' x"),
    ("ansi-c hex escape", "$'\\x74ouch' x"),
    ("line continuation", "tou\\\nch x"),
    ("IFS", "touch${IFS}x"),
    ("brace expansion", "{touch,x}"),
    ("variable", "c=touch; $c x"),
    ("empty substitution", "tou$()ch x"),
    ("env -i", "env -i touch x"),
    ("env assignment", "env A=1 touch x"),
    ("timeout", "timeout 5 touch x"),
    ("nice", "nice -n 5 touch x"),
    ("nohup", "nohup touch x"),
    ("stdbuf", "stdbuf -oL touch x"),
    ("command", "command touch x"),
    ("exec", "exec touch x"),
    ("time", "time touch x"),
    ("xargs", "echo x | xargs touch"),
    ("xargs sh -c", "echo x | xargs -I{} sh -c 'touch {}'"),
    ("find -exec", "find . -maxdepth 0 -exec touch x \\;"),
    ("here-string", "bash <<< 'touch x'"),
    ("pipe into a shell", "echo 'touch x' | bash"),
    ("here-document", "bash <<EOF\ntouch x\nEOF"),
    ("alias", "shopt -s expand_aliases\nalias t=touch\nt x"),
    ("glob", "/usr/bin/tou?h x"),
    ("escape", "\\touch x"),
    ("quotes", "'tou'\"ch\" x"),
    ("full path", "/usr/bin/touch x"),
    ("source", "echo 'touch x' > s.sh; . ./s.sh"),
    ("arithmetic", "v='a[$(touch x)]'; echo $((v))"),
    ("PATH", "PATH=/usr/bin:$PATH touch x"),
    ("subshell", "(touch x)"),
    ("substitution", "echo $(touch x)"),
    ("backticks in a here-document", "cat <<EOF\n`touch x`\nEOF"),
    ("process substitution", "cat <(touch x)"),
    ("function", "f() { touch x; }; f"),
]
IDS = [name for name, _ in BYPASSES]
COMMANDS = [command for _, command in BYPASSES]


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
def test_the_bypass_really_runs_touch_when_no_rule_speaks(shell, command):
    s = shell()
    r = s.call("bash", {"command": command})
    assert s.path("x").exists(), r.text


@pytest.mark.parametrize("command", COMMANDS, ids=IDS)
@pytest.mark.parametrize("action", ["deny", "ask"])
def test_the_bypass_is_refused_by_a_touch_rule(shell, command, action):
    s = shell({"permissions": {action: ["Bash(touch:*)"]}})
    r = s.call("bash", {"command": command})
    assert r.is_error and r.error.kind == "blocked", r.text
    assert r.error.signature == f"{action}:Bash(touch:*)"
    assert r.meta["executed"] is False
    assert not s.path("x").exists() and not s.path("s.sh").exists()


@pytest.mark.parametrize("command", [
    "echo touch", "ls -la", "git --version", "printf '%s\\n' touch", "grep -c touch /dev/null",
    "for i in 1 2; do echo $i; done", "x=$((1 + 2)); echo $x",
])
def test_commands_that_do_not_run_touch_still_run(shell, command):
    s = shell({"permissions": {"deny": ["Bash(touch:*)"]}})
    r = s.call("bash", {"command": command})
    assert not (r.error and r.error.kind == "blocked"), r.text


def test_an_undecidable_command_names_why(shell):
    s = shell({"permissions": {"deny": ["Bash(touch:*)"]}})
    r = s.call("bash", {"command": "c=touch; $c x"})
    assert "cannot be decided statically" in r.text and "computed at run time" in r.text


def test_allow_rules_never_cover_what_cannot_be_decided(shell):
    s = shell({"permissions": {"mode": "deny", "allow": ["Bash(echo:*)"]}})
    assert not s.call("bash", {"command": "echo ok"}).is_error
    for command in ("eval echo x > x", "c=echo; $c hi", "echo x | bash"):
        r = s.call("bash", {"command": command})
        assert r.error.signature == "mode:deny", command
    assert not s.path("x").exists()


def test_wrappers_are_judged_by_the_command_they_run(shell):
    s = shell({"permissions": {"mode": "deny", "allow": ["Bash(echo:*)", "Bash(find:*)"]}})
    assert not s.call("bash", {"command": "timeout 5 echo ok"}).is_error
    assert not s.call("bash", {"command": "nice -n 3 echo ok"}).is_error
    r = s.call("bash", {"command": "find . -maxdepth 0 -exec touch x \\;"})
    assert r.error.signature == "mode:deny" and 'Bash(touch:*)' in r.text
    r = s.call("bash", {"command": "sudo echo ok"})  # sudo changes who runs it: name it
    assert r.error.signature == "mode:deny" and 'Bash(sudo:*)' in r.text
    assert not s.path("x").exists()


# --- redirections are writes ----------------------------------------------------------------


def test_an_allowed_command_cannot_redirect_into_any_path(shell, tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    s = shell({"permissions": {"mode": "deny", "allow": ["Bash(echo:*)"]}})
    for command in (f"echo pwned > {outside}/f", f"echo pwned >> {outside}/f",
                    f"echo pwned &> {outside}/f", f"echo pwned 2>{outside}/f",
                    f"echo pwned >| {outside}/f", "echo pwned > inside.txt",
                    "echo pwned > $HOME/f", f"bash -c 'echo pwned > {outside}/f'"):
        r = s.call("bash", {"command": command})
        assert r.error and r.error.signature == "mode:deny", command
    assert list(outside.iterdir()) == [] and not s.path("inside.txt").exists()
    r = s.call("bash", {"command": "echo pwned > inside.txt"})
    assert 'allow = ["Edit(inside.txt)"]' in r.text
    # descriptor copies and /dev/null are not files
    assert not s.call("bash", {"command": "echo ok 2>&1 >/dev/null"}).is_error


def test_edit_rules_judge_redirections(shell):
    s = shell({"permissions": {"mode": "deny", "allow": ["Bash(echo:*)", "Edit(out/**)"],
                               "deny": ["Edit(out/secret/**)"]}})
    os.makedirs(s.path("out/secret"))
    assert not s.call("bash", {"command": "echo ok > out/a.txt"}).is_error
    assert s.read("out/a.txt") == b"ok\n"
    r = s.call("bash", {"command": "echo bad > out/secret/k"})
    assert r.error.signature == "deny:Edit(out/secret/**)"
    assert "writes" in r.text and not s.path("out/secret/k").exists()
    r = s.call("bash", {"command": "echo bad > out/../b.txt"})
    assert r.error.signature == "mode:deny" and not s.path("b.txt").exists()


def test_a_spec_less_edit_deny_covers_shell_writes(shell):
    s = shell({"permissions": {"deny": ["Edit"]}})
    r = s.call("bash", {"command": "echo x > f.txt"})
    assert r.error.signature == "deny:Edit" and not s.path("f.txt").exists()
    assert not s.call("bash", {"command": "echo x"}).is_error


# --- through callgate replay ----------------------------------------------------------------


def test_every_bypass_through_replay(tmp_path: Path):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    config = tmp_path / "callgate.toml"
    config.write_text('[permissions]\ndeny = ["Bash(touch:*)"]\n', encoding="utf-8")
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(
        json.dumps({"id": f"c{i}", "name": "bash", "arguments": {"command": command}}) + "\n"
        for i, command in enumerate(COMMANDS)), encoding="utf-8")
    env = dict(os.environ, CALLGATE_LOAD_PLUGINS="shell")
    proc = subprocess.run([sys.executable, "-m", "callgate_cli", "replay", str(transcript),
                           "--workspace", str(workspace), "--config", str(config), "--os",
                           "posix"], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert len(results) == len(COMMANDS)
    assert [r["error"]["signature"] for r in results] == ["deny:Bash(touch:*)"] * len(COMMANDS)
    assert sorted(os.listdir(workspace)) == []
