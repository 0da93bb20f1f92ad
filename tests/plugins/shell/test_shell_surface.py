"""Which shell a host gets and where each tool shows up (shell.md §1.1, §1.6, §5.1, §5.2),
through boot, the provider renderings, the contract and the ``callgate tools`` CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import callgate_providers as providers
import callgate_shell
import pytest
from callgate import Host
from callgate.host import BootError
from callgate_shell.config import DEFAULTS, ShellNotFound, select_shell

PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini", "mcp")
ALIASES = ("bash_output", "kill_shell", "wait")


def names(tools, provider):
    if provider == "openai-chat":
        return {t["function"]["name"] for t in tools}
    return {t["name"] for t in tools}


def boot(**kwargs):
    return Host.boot(kwargs.pop("config", {}), plugins=[callgate_shell], entrypoints=False,
                     **kwargs)


def test_posix_surfaces_have_bash_and_the_job_tools_but_no_pwsh_or_aliases():  # §5.1
    host = boot(os="posix")
    for provider in PROVIDERS:
        found = names(providers.surface(host, provider), provider)
        assert {"bash", "job_output", "job_kill"} <= found, provider
        assert not found & {"pwsh", *ALIASES}, provider
    for alias in ALIASES:
        spec = host.registry.get(alias)
        assert spec is not None and spec.visibility == "alias"
    entries = providers.contract_entries(host.registry.tools())
    contract = {e["name"]: e["read_only"] for e in entries}
    assert (contract["bash_output"], contract["kill_shell"], contract["wait"]) == \
        (True, False, True)
    assert (contract["bash"], contract["job_output"], contract["job_kill"]) == \
        (False, True, False)


def test_aliases_are_callable_by_name_in_a_session(shell):  # §5.1
    s = shell()
    assert set(ALIASES) <= set(s.session.available_tools())
    assert not set(ALIASES) & set(s.session.tool_names())
    assert s.call("wait", {}).text == "No background jobs to wait for."
    assert s.call("bash_output", {"job_id": "bash-1"}).error.kind == "not_found"
    assert s.call("kill_shell", {"job_id": "bash-1"}).error.kind == "not_found"


def test_shell_tools_carry_the_bash_group_and_command_subject():
    spec = boot(os="posix").registry.get("bash")
    assert spec.groups == ("Bash",)
    assert (spec.permission_subject.kind, spec.permission_subject.arguments) == \
        ("command", ("command",))
    pwsh = boot(os="windows").registry.get("pwsh")
    assert pwsh.groups == ("Bash",) and pwsh.permission_subject.kind == "command"
    assert spec.platforms == {"posix"} and pwsh.platforms == {"windows"}


def test_forcing_pwsh_on_posix_registers_it_for_this_host_instead_of_bash():  # §1.1
    # any existing program stands in for the lookup; nothing here claims to run PowerShell
    host = boot(os="posix", config={"shell": {"force": "pwsh", "pwsh_path": sys.executable}})
    assert "bash" not in host.registry and host.visible_names()[0] == "pwsh"
    assert host.registry.get("pwsh").platforms == {"posix"}


def test_the_selector_picks_pwsh_on_windows_and_bash_on_posix():  # §5.2
    def which(name):
        return {"pwsh": r"C:\pwsh\pwsh.exe", "bash": "/bin/bash"}.get(name)

    assert select_shell("windows", "windows", DEFAULTS, which).tool == "pwsh"
    assert select_shell("windows", "windows", DEFAULTS, which).executable == r"C:\pwsh\pwsh.exe"
    assert select_shell("posix", "posix", DEFAULTS, which).tool == "bash"
    forced = {**DEFAULTS, "force": "pwsh"}
    assert select_shell("posix", "posix", forced, which).tool == "pwsh"


def test_windows_falls_back_to_windows_powershell():  # §3 interpreter
    def which(name):
        return r"C:\WINDOWS\System32\WindowsPowerShell\v1.0\powershell.exe" \
            if name == "powershell" else None

    choice = select_shell("windows", "windows", DEFAULTS, which)
    assert choice.executable.endswith("powershell.exe")
    with pytest.raises(ShellNotFound):
        select_shell("windows", "windows", {**DEFAULTS, "pwsh_path": "nope"}, which)


def test_windows_boot_registers_pwsh_and_not_bash():  # §5.2
    host = boot(os="windows")
    assert "pwsh" in host.visible_names() and "bash" not in host.registry
    for provider in PROVIDERS:
        found = names(providers.surface(host, provider), provider)
        assert "pwsh" in found and "bash" not in found and not found & set(ALIASES)


def test_forcing_pwsh_without_powershell_fails_boot_naming_it(tmp_path, monkeypatch):  # §5.2
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BootError, match="pwsh") as info:
        boot(config={"shell": {"force": "pwsh"}})
    assert "shell.force" in str(info.value)
    with pytest.raises(BootError, match="bash_path"):
        boot(config={"shell": {"bash_path": "no-such-bash"}})


def test_a_bad_shell_config_value_fails_boot_with_the_key(tmp_path):
    config = tmp_path / "callgate.toml"
    config.write_text("[shell]\nmax_running_jobs = 0\n")
    with pytest.raises(BootError, match=r"callgate.toml:2: shell.max_running_jobs"):
        Host.boot(config, plugins=[callgate_shell], entrypoints=False)
    config.write_text("[shell]\nforse = 'pwsh'\n")
    with pytest.raises(BootError, match=r"shell.forse: unknown key"):
        Host.boot(config, plugins=[callgate_shell], entrypoints=False)


@pytest.mark.skipif(shutil.which("pwsh") is not None, reason="pwsh is installed here")
def test_a_forced_windows_surface_boots_but_pwsh_cannot_start(shell):  # §5.2
    s = shell(os_name="windows")
    assert "pwsh" in s.session.tool_names() and "bash" not in s.session.available_tools()
    r = s.call("pwsh", {"command": "Write-Output hi", "description": "say hi"})
    assert r.is_error and r.text.startswith("could not start pwsh: ")
    r = s.call("pwsh", {"command": "Start-Sleep 1", "description": "nap",
                        "run_in_background": True})
    assert r.is_error and r.text.startswith("could not start pwsh: ")
    assert r.meta["job_id"] == "pwsh-1"
    assert s.call("job_output", {"job_id": "pwsh-1"}).text.startswith(
        "[pwsh-1] failed (could not start: ")


def _cli(*args):
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "shell"}
    return subprocess.run([sys.executable, "-m", "callgate_cli", *args], capture_output=True,
                          text=True, env=env, timeout=60, check=False)


def test_callgate_tools_lists_one_shell_per_os_and_no_aliases():  # issue: CLI
    posix = _cli("tools", "--os", "posix")
    windows = _cli("tools", "--os", "windows")
    assert posix.returncode == 0 and windows.returncode == 0, posix.stderr + windows.stderr
    posix_names = [line.split()[0] for line in posix.stdout.splitlines()]
    windows_names = [line.split()[0] for line in windows.stdout.splitlines()]
    assert posix_names[:3] == ["bash", "job_output", "job_kill"]
    assert windows_names[:3] == ["pwsh", "job_output", "job_kill"]
    assert "pwsh" not in posix_names and "bash" not in windows_names
    for listed in (posix_names, windows_names):
        assert not set(listed) & set(ALIASES)
    rendered = _cli("tools", "--os", "windows", "--provider", "anthropic")
    assert {t["name"] for t in json.loads(rendered.stdout)} >= {"pwsh", "job_output"}
