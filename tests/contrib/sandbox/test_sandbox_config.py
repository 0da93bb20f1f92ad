"""``[sandbox]`` at boot: bad values are config errors naming file, key and line; an enabled
sandbox with no working backend fails boot; ``callgate plugins`` shows the backend; other
plugins can add backends."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import callgate_sandbox
import callgate_shell
import pytest
from callgate import Host, hookimpl
from callgate.host import BootError, ConfigError

from .sandbox_helpers import PROBE, needs_bwrap

REPO = Path(__file__).resolve().parents[3]
PLUGINS = [callgate_shell, callgate_sandbox]


def boot(tmp_path: Path, toml: str, plugins: list[object] = PLUGINS) -> Host:
    path = tmp_path / "callgate.toml"
    path.write_text(toml)
    return Host.boot(path, plugins=plugins, entrypoints=False)


def boot_error(tmp_path: Path, toml: str, plugins: list[object] = PLUGINS) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        boot(tmp_path, toml, plugins)
    return caught.value


@pytest.mark.parametrize(("value", "reason"), [
    ('"relative/dir"', "is not an absolute path"),
    ('"~/.cache"', "is not an absolute path"),
    ('"/no/such/callgate/dir"', "does not exist"),
    ('"/"', "is the root directory"),
    ('"/usr/.."', "is the root directory"),
])
def test_a_bad_writable_path_fails_boot_naming_the_item(tmp_path, value, reason):
    err = boot_error(tmp_path, f'[sandbox]\nwritable = [\n  "/usr",\n  {value},\n]\n')
    assert err.key == "sandbox.writable[1]" and err.line == 4
    assert reason in err.reason
    assert str(err).startswith(f"{tmp_path / 'callgate.toml'}:4: sandbox.writable[1]: ")


@pytest.mark.parametrize(("value", "reason"), [
    ('"etc"', "is not an absolute path"),
    ('"/no/such/callgate/file"', "does not exist"),
])
def test_a_bad_readable_path_fails_boot(tmp_path, value, reason):
    err = boot_error(tmp_path, f"[sandbox]\nenabled = false\nreadable = [{value}]\n")
    assert err.key == "sandbox.readable[0]" and err.line == 3 and reason in err.reason


def test_the_root_may_be_readable(tmp_path):
    assert boot(tmp_path, '[sandbox]\nreadable = ["/"]\n')


def test_an_unknown_backend_fails_boot_listing_the_known_ones(tmp_path):
    err = boot_error(tmp_path, '[sandbox]\nenabled = true\nbackend = "docker"\n')
    assert err.key == "sandbox.backend" and err.line == 3
    assert err.reason == "unknown backend 'docker'; known backends: auto, bwrap, none"


@pytest.mark.parametrize(("toml", "key", "reason"), [
    ('[sandbox]\nnetwork = "yes"\n', "sandbox.network", "must be a boolean, not a string"),
    ("[sandbox]\nenabled = 1\n", "sandbox.enabled", 'must be one of true, false, "auto"'),
    ('[sandbox]\nwritable = "/tmp"\n', "sandbox.writable", "must be an array, not a string"),
    ("[sandbox]\nwriteable = []\n", "sandbox.writeable", "unknown key"),
    ('[sandbox]\nbackend = ""\n', "sandbox.backend", ""),
])
def test_values_of_the_wrong_type_fail_boot_through_the_core(tmp_path, toml, key, reason):
    err = boot_error(tmp_path, toml)
    assert err.key == key and err.line == 2 and reason in err.reason


def test_enabled_without_bwrap_on_path_fails_boot_clearly(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(shutil.which("bash"))  # the shell plugin still finds bash
    monkeypatch.setenv("PATH", str(bin_dir))
    err = boot_error(tmp_path, "[sandbox]\nenabled = true\n")
    assert err.key == "sandbox.enabled" and err.line == 2
    assert err.reason == (
        "the sandbox is enabled but no backend works on this machine (bwrap: the 'bwrap' "
        "program is not on PATH; install bubblewrap (Debian/Ubuntu: apt-get install "
        "bubblewrap)); fix that, or set [sandbox] enabled = false to run shell commands "
        "unconfined")
    # disabled, the same machine boots: bwrap is never looked for
    assert boot(tmp_path, "[sandbox]\nenabled = false\n")
    assert boot(tmp_path, '[sandbox]\nenabled = true\nbackend = "none"\n')


def test_a_bwrap_that_cannot_create_namespaces_fails_boot_with_its_reason(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(shutil.which("bash"))
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    err = boot_error(tmp_path, '[sandbox]\nenabled = true\nbackend = "bwrap"\n')
    assert err.key == "sandbox.backend" and err.line == 3
    assert f"bwrap: {fake} cannot create a sandbox here: bwrap: No permissions to create new " \
           "namespace" in err.reason


class FakeBackend(callgate_sandbox.Backend):
    """Marks commands instead of confining them: enough to see the backend chosen."""

    name = "fake"

    def __init__(self, ok: bool = True) -> None:
        self.ok = ok

    def probe(self) -> callgate_sandbox.Probe:
        return callgate_sandbox.Probe(self.ok, "fake 1.0" if self.ok else "fake is broken")

    def wrap(self, argv, env, cwd, policy):
        return list(argv), {**env, "SANDBOXED_BY": f"fake network={policy.network}"}, cwd


class FakeBackends:
    def __init__(self, *backends: callgate_sandbox.Backend) -> None:
        self.backends = list(backends)

    @hookimpl(optionalhook=True)
    def callgate_sandbox_backends(self):
        return self.backends


def test_a_plugin_backend_is_chosen_by_name(callgate_session):
    s = callgate_session(plugins=[*PLUGINS, ("fakes", FakeBackends(FakeBackend()))],
                         config={"sandbox": {"enabled": True, "backend": "fake"}})
    assert s.call("bash", {"command": "echo $SANDBOXED_BY"}).text == \
        "fake network=True\n[exit code 0]"
    [info] = [p for p in s.host.host.plugins() if p.name == "callgate_sandbox"]
    assert info.info == ("sandbox: fake (fake 1.0); network on; writable: workspace "
                         "(protected paths read-only), private /tmp",)


def test_auto_falls_back_to_a_plugin_backend_when_bwrap_cannot_run(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bash").symlink_to(shutil.which("bash"))
    monkeypatch.setenv("PATH", str(bin_dir))
    fakes = ("fakes", FakeBackends(FakeBackend()))
    host = boot(tmp_path, "[sandbox]\nenabled = true\n", [*PLUGINS, fakes])
    [info] = [p for p in host.plugins() if p.name == "callgate_sandbox"]
    assert info.info[0].startswith("sandbox: fake (fake 1.0)")
    broken = ("fakes", FakeBackends(FakeBackend(ok=False)))
    err = boot_error(tmp_path, "[sandbox]\nenabled = true\n", [*PLUGINS, broken])
    assert "bwrap: the 'bwrap' program is not on PATH" in err.reason
    assert "fake: fake is broken" in err.reason


def test_a_backend_name_taken_twice_fails_boot(tmp_path):
    class Impostor(FakeBackend):
        name = "bwrap"

    with pytest.raises(BootError, match="'bwrap' is empty, reserved or registered twice"):
        boot(tmp_path, "", [*PLUGINS, ("fakes", FakeBackends(Impostor()))])


def run_plugins_command(tmp_path: Path, toml: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "callgate.toml"
    config.write_text(toml)
    env = {**os.environ, "CALLGATE_LOAD_PLUGINS": "shell,sandbox"}
    return subprocess.run([sys.executable, "-m", "callgate_cli", "plugins", "--config",
                           str(config)], capture_output=True, text=True, env=env, timeout=60,
                          cwd=REPO, check=False)


@needs_bwrap
def test_callgate_plugins_shows_the_active_backend(tmp_path):
    done = run_plugins_command(tmp_path, "[sandbox]\nenabled = true\nnetwork = true\n"
                                         f'writable = ["{tmp_path}"]\n')
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    at = lines.index(next(x for x in lines if x.startswith("sandbox  ")))
    assert lines[at].endswith("entry point callgate_sandbox (callgate-sandbox)")
    assert lines[at + 1] == "    tools: (no tools)"
    assert lines[at + 2] == (f"    sandbox: bwrap ({PROBE.detail}); network on; writable: "
                             f"workspace (protected paths read-only), private /tmp, {tmp_path}")


def test_callgate_plugins_says_when_the_sandbox_is_off(tmp_path):
    done = run_plugins_command(tmp_path, "[sandbox]\nenabled = false\n")
    assert done.returncode == 0, done.stderr
    assert ("    sandbox: off (enabled = false: programs sessions start run unconfined and "
            "those that would run workspace-controlled code are refused)\n") in done.stdout
    done = run_plugins_command(tmp_path, '[sandbox]\nenabled = true\nbackend = "nope"\n')
    assert done.returncode == 2
    assert "callgate.toml:3: sandbox.backend: unknown backend 'nope'" in done.stderr
