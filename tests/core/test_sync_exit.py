"""A script that forgets ``callgate.sync.Host.close()`` still exits (issue 36.1): its open
hosts are closed at interpreter exit, and a forgotten host's loop thread is never left to
wait on itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = {
    "left open": "host = sync.Host.boot({}, plugins=[])\n"
                 "session = host.open_session(WS)\n",
    "dropped": "import gc\n"
               "host = sync.Host.boot({}, plugins=[])\n"
               "host.open_session(WS)\n"
               "del host\n"
               "gc.collect()\n",
    "two hosts": "a = sync.Host.boot({}, plugins=[])\n"
                 "b = sync.Host.boot({}, plugins=[])\n"
                 "a.open_session(WS)\n"
                 "b.close()\n",
}


@pytest.mark.parametrize("case", sorted(SCRIPTS))
def test_a_script_that_forgets_close_exits(tmp_path: Path, case: str) -> None:
    script = tmp_path / "script.py"
    script.write_text(f"from callgate import sync\nWS = {str(tmp_path)!r}\n{SCRIPTS[case]}"
                      "print('done')\n")
    try:
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: the interpreter did not exit")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "done\n"
