"""pwsh (shell.md §3, §5.33-§5.36): argv, dialect and the 5.1 check as units and through
validation with a fake executable path; end to end only where a pwsh binary exists."""

from __future__ import annotations

import base64
import shutil

import pytest
from callgate_shell.pwsh_dialect import (
    FLAGS,
    build_argv,
    build_script,
    find_chain_operator,
    is_windows_powershell,
)
from callgate_shell.tools.pwsh import pwsh_argv

WINDOWS_POWERSHELL = r"C:\WINDOWS\System32\WindowsPowerShell\v1.0\powershell.exe"


def script_of(size: int) -> str:
    body = "Write-Output 'é中'\n"  # multi-byte characters: the limit counts UTF-8 bytes
    text = body * (size // len(body.encode()))
    text += "#" * (size - len(text.encode()))
    assert len(text.encode("utf-8")) == size
    return text


@pytest.mark.parametrize("size", [7999, 8000])
def test_scripts_up_to_8000_bytes_go_as_command(size):  # §5.33
    script = script_of(size)
    argv = build_argv("pwsh", script)
    assert argv == ["pwsh", "-NoProfile", "-NonInteractive", "-ExecutionPolicy", "Bypass",
                    "-NoLogo", "-Command", script]


def test_scripts_above_8000_bytes_go_encoded_and_round_trip():  # §5.33
    script = script_of(8001)
    argv = build_argv(r"C:\Program Files\PowerShell\7\pwsh.exe", script)
    assert argv[1:6] == list(FLAGS) and argv[6] == "-EncodedCommand"
    assert base64.b64decode(argv[7]).decode("utf-16-le") == script


def test_the_script_wraps_the_command_for_utf8_errors_and_exit_codes():  # §3 script
    script = build_script("Write-Output hi")
    assert script.index("[Console]::OutputEncoding") < script.index("$OutputEncoding")
    assert "$ProgressPreference = 'SilentlyContinue'" in script
    assert "try {\nWrite-Output hi\n} catch {" in script
    assert "exit 1" in script and "exit $LASTEXITCODE" in script
    argv = pwsh_argv("pwsh", "Write-Output hi")
    assert argv[-1] == script


@pytest.mark.parametrize(("exe", "legacy"), [
    (WINDOWS_POWERSHELL, True), ("powershell", True), ("POWERSHELL.EXE", True),
    ("/usr/bin/pwsh", False), (r"C:\Program Files\PowerShell\7\pwsh.exe", False),
    ("powershell-preview", False),
])
def test_the_dialect_comes_from_the_executable_name(exe, legacy):  # §3 dialect
    assert is_windows_powershell(exe) is legacy


@pytest.mark.parametrize(("command", "found"), [
    ("echo a && echo b", "&&"), ("a || b", "||"),
    ("Write-Output 'a && b'", None), ('Write-Output "x || y"', None),
    ("Write-Output 'it''s && fine'", None), ('Write-Output "say ""a || b"""', None),
    ('Write-Output "tick `" && still inside"', None), ("echo a `&& b", None),
    ("# a && b\necho ok", None), ("<# a || b #> echo ok", None),
    ("@'\na && b\n'@ | Write-Output", None), ("Write-Output 'x'; a && b", "&&"),
])
def test_the_chain_operator_scan_respects_quotes_and_comments(command, found):  # §3 5.1 check
    assert find_chain_operator(command) == found


def test_windows_powershell_refuses_chain_operators_before_running(shell):  # §5.34
    s = shell({"shell": {"pwsh_path": WINDOWS_POWERSHELL}}, os_name="windows")
    for command in ("echo a && echo b", "a || b"):
        r = s.call("pwsh", {"command": command, "description": "chain"})
        assert r.error.kind == "invalid_arguments" and r.meta["executed"] is False
        assert "Windows PowerShell 5.1" in r.text and "';'" in r.text
    for command in ("Write-Output 'a && b'", 'Write-Output "x || y"'):
        r = s.call("pwsh", {"command": command, "description": "quoted"})
        assert r.error is None or r.error.kind != "invalid_arguments", r.text


def test_powershell_7_is_never_refused(shell):  # §5.34
    s = shell({"shell": {"pwsh_path": "pwsh"}}, os_name="windows")
    r = s.call("pwsh", {"command": "echo a && echo b", "description": "chain"})
    assert r.error is None or r.error.kind != "invalid_arguments", r.text


def test_pwsh_requires_a_description_and_bash_does_not(shell):  # §5.35
    s = shell(os_name="windows")
    r = s.call("pwsh", {"command": "Write-Output hi"})
    assert r.error.kind == "invalid_arguments" and "description" in r.text
    r = s.call("pwsh", {"command": "Write-Output hi", "description": ""})
    assert r.error.kind == "invalid_arguments"
    b = shell()
    assert b.call("bash", {"command": "echo hi"}).text == "hi\n[exit code 0]"


@pytest.fixture
def pwsh_session(shell):
    if shutil.which("pwsh") is None:
        pytest.skip("pwsh not installed: PowerShell end-to-end tests need a pwsh binary")
    return shell({"shell": {"force": "pwsh"}})


def test_pwsh_end_to_end(pwsh_session):  # §5.36
    s = pwsh_session
    r = s.call("pwsh", {"command": "Write-Output hi; exit 3", "description": "exit 3"})
    assert r.text == "hi\n[exit code 3]"
    r = s.call("pwsh", {"command": "throw 'boom'", "description": "throw"})
    assert "boom" in r.text and r.text.endswith("[exit code 1]")
    r = s.call("pwsh", {"command": "Write-Output '中文'", "description": "utf-8"})
    assert r.text.startswith("中文")
    long = "Write-Output 'x'\n" * 530  # > 9000 bytes once wrapped: -EncodedCommand
    r = s.call("pwsh", {"command": long, "description": "long"})
    assert r.text.endswith("[exit code 0]") and r.text.splitlines().count("x") == 530
    r = s.call("pwsh", {"command": "Start-Sleep 1", "description": "bg",
                        "run_in_background": True})
    assert r.meta["job_id"] == "pwsh-1"
    r = s.call("pwsh", {"command": "Start-Sleep 30", "description": "slow", "timeout_ms": 500})
    assert r.text.endswith("[timed out after 500 ms; process group killed; output above is "
                           "partial]")
