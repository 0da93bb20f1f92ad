"""A minimal container image that runs ``callgate worker``, built offline from this checkout
(issue 37's container backend, tests/core/test_executor_container.py).

No base image is pulled (a test machine need not reach a registry). The image is:

- a Debian root file system made of the files of this machine's own installed Debian
  packages: Python 3.11, bash, coreutils and every package they depend on (the closure
  ``apt-cache depends --recurse --installed`` reports), copied from ``dpkg -L``'s lists
  (documentation left out), with merged-/usr links;
- ``/opt/callgate``: a relocatable virtual environment on that Python holding the wheels
  ``uv build`` makes of the workspace distributions a worker with the file, search and
  shell tools needs, and their dependencies at the versions ``uv.lock`` pins (installed
  by ``uv pip --offline`` from uv's cache: no network);
- ``PATH`` starting with ``/opt/callgate/bin`` (so ``callgate worker`` runs) and
  ``sleep infinity`` as its command.

``podman import`` makes it one layer. Its tag is a digest of everything that goes in (the
sources of those distributions, ``uv.lock``, this file, the package list), so a suite
reuses it until one of them changes; older tags are removed when a new one is built.

Run ``python tests/core/worker_image.py`` to build it by hand (it prints the image).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
REPOSITORY = "localhost/callgate-worker-test"
#: the workspace distributions a worker serving the file, search and shell tools needs
DISTRIBUTIONS = {
    "callgate": ".",
    "callgate-cli": "cli",
    "callgate-providers": "libs/callgate-providers",
    "callgate-toolkit": "libs/callgate-toolkit",
    "callgate-commandline": "libs/callgate-commandline",
    "callgate-files": "plugins/files",
    "callgate-search": "plugins/search",
    "callgate-shell": "plugins/shell",
}
#: Debian's Python (``/usr/bin/python3`` names the versioned one, 3.11 or later)
PYTHON = os.path.realpath("/usr/bin/python3")
VERSION = os.path.basename(PYTHON).removeprefix("python")
#: the Debian packages the image's root file system is made of (with their dependencies)
DEBIAN_ROOTS = (
    f"python{VERSION}-minimal",
    f"libpython{VERSION}-stdlib",
    "bash",
    "coreutils",
    "dash",
)
SKIPPED = (
    "/usr/share/doc/",
    "/usr/share/man/",
    "/usr/share/info/",
    "/usr/share/locale/",
    "/usr/share/lintian/",
)
#: merged /usr: these top-level directories are links into /usr on Debian 12
MERGED = {"bin": "usr/bin", "sbin": "usr/sbin", "lib": "usr/lib", "lib64": "usr/lib64"}
PASSWD = "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n"
GROUP = "root:x:0:\nnogroup:x:65534:\n"


class CannotBuild(Exception):
    """What this machine lacks to build the image (a test skips with it)."""


def _run(argv: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()[-600:]
        raise CannotBuild(f"{' '.join(argv[:4])}... failed: {said}")
    return done


def _sources() -> list[Path]:
    """Every file that goes into the image's Python side (tracked or not, not ignored)."""
    listed = _run(
        [
            "git",
            "-C",
            str(REPO),
            "ls-files",
            "-co",
            "--exclude-standard",
            "-z",
            "--",
            *[d for d in DISTRIBUTIONS.values() if d != "."],
            "core",
            "pyproject.toml",
            "uv.lock",
            "README.md",
        ]
    ).stdout
    return sorted(REPO / name for name in listed.split("\0") if name and (REPO / name).is_file())


def debian_packages() -> list[str]:
    """The installed packages the root file system needs (the roots and their closure)."""
    tools = shutil.which("apt-cache") is not None and shutil.which("dpkg") is not None
    major, _, minor = VERSION.partition(".")
    recent = major == "3" and minor.isdigit() and int(minor) >= 11
    if not (tools and recent and os.path.exists(PYTHON)):
        raise CannotBuild(
            f"the offline image is made of this machine's Debian packages "
            f"(apt-cache, dpkg, Python 3.11 or later as /usr/bin/python3; "
            f"found {PYTHON}): not such a machine"
        )
    out = _run(
        [
            "apt-cache",
            "depends",
            "--recurse",
            "--installed",
            "--no-recommends",
            "--no-suggests",
            "--no-conflicts",
            "--no-breaks",
            "--no-replaces",
            "--no-enhances",
            *DEBIAN_ROOTS,
        ]
    ).stdout
    return sorted(
        {
            line.strip()
            for line in out.splitlines()
            if line and not line.startswith(" ") and not line.startswith("<")
        }
    )


def tag() -> str:
    """The image's name: a digest of everything it is built from."""
    digest = hashlib.sha256()
    for path in [*_sources(), Path(__file__)]:
        digest.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(" ".join(debian_packages()).encode())
    return f"{REPOSITORY}:{digest.hexdigest()[:16]}"


def _debian_files(packages: list[str]) -> list[str]:
    """The packages' files and links as they are on this machine (directories left out)."""
    found: set[str] = set()
    listed = _run(["dpkg", "-L", *packages]).stdout
    for line in listed.splitlines():
        if not line.startswith("/") or line.startswith(SKIPPED):
            continue
        # /bin/bash is /usr/bin/bash under merged /usr: resolve the directory, keep the name
        path = os.path.join(os.path.realpath(os.path.dirname(line)), os.path.basename(line))
        if os.path.islink(path) or os.path.isfile(path):
            found.add(path)
    return sorted(found)


def _environment(into: Path, wheels: Path) -> None:
    """The relocatable virtual environment: the distributions' wheels and, at the versions
    uv.lock pins, their dependencies, from uv's cache."""
    uv = shutil.which("uv")
    if uv is None:
        raise CannotBuild("uv is not installed")
    for source in DISTRIBUTIONS.values():
        _run([uv, "build", "--wheel", "--offline", "-q", "-o", str(wheels), str(REPO / source)])
    pins: set[str] = set()
    for name in ("callgate-files", "callgate-search", "callgate-shell"):
        exported = _run(
            [
                uv,
                "export",
                "--frozen",
                "--no-hashes",
                "--no-dev",
                "--no-header",
                "--no-annotate",
                "--no-emit-workspace",
                "--package",
                name,
            ],
            cwd=str(REPO),
        ).stdout
        pins.update(line for line in exported.splitlines() if line and not line.startswith("#"))
    requirements = wheels / "requirements.txt"
    requirements.write_text("\n".join(sorted(pins)) + "\n")
    env = {**os.environ, "VIRTUAL_ENV": str(into)}
    env.pop("UV_PROJECT_ENVIRONMENT", None)
    _run(
        [uv, "venv", "-q", "--relocatable", "--no-python-downloads", "--python", PYTHON, str(into)],
        env=env,
    )
    python = str(into / "bin" / "python")
    try:
        _run(
            [
                uv,
                "pip",
                "install",
                "-q",
                "--offline",
                "--no-deps",
                "--python",
                python,
                "-r",
                str(requirements),
            ],
            env=env,
        )
    except CannotBuild as exc:
        raise CannotBuild(
            f"the dependencies are not all in uv's cache and the image is "
            f"built without network: {exc}"
        ) from None
    _run(
        [
            uv,
            "pip",
            "install",
            "-q",
            "--offline",
            "--no-deps",
            "--python",
            python,
            *map(str, sorted(wheels.glob("*.whl"))),
        ],
        env=env,
    )


def _rootfs_tar(target: Path, venv: Path) -> None:
    added: set[str] = set()

    def add_text(tar: tarfile.TarFile, name: str, text: str) -> None:
        info = tarfile.TarInfo(name)
        data = text.encode()
        info.size, info.mode = len(data), 0o644
        tar.addfile(info, io.BytesIO(data))

    def add_dir(tar: tarfile.TarFile, name: str, mode: int = 0o755) -> None:
        if name in added:
            return
        added.add(name)
        info = tarfile.TarInfo(name)
        info.type, info.mode = tarfile.DIRTYPE, mode
        tar.addfile(info)

    with tarfile.open(target, "w") as tar:
        for top, into in MERGED.items():
            if os.path.islink(f"/{top}"):
                info = tarfile.TarInfo(top)
                info.type, info.linkname = tarfile.SYMTYPE, into
                tar.addfile(info)
                added.add(top)
        for name in ("usr", "etc", "root", "opt", "var", "var/tmp", "dev", "proc", "sys"):
            add_dir(tar, name)
        add_dir(tar, "tmp", 0o1777)
        files = _debian_files(debian_packages())
        parents: set[str] = set()
        for path in files:
            parent = os.path.dirname(path)
            while parent not in ("/", "") and parent not in parents:
                parents.add(parent)
                parent = os.path.dirname(parent)
        for parent in sorted(parents):
            if parent.strip("/") not in MERGED and not os.path.islink(parent):
                add_dir(tar, parent.lstrip("/"))
        for path in files:
            if path.lstrip("/") in added:
                continue
            added.add(path.lstrip("/"))
            tar.add(path, arcname=path.lstrip("/"), recursive=False)
        add_text(tar, "etc/passwd", PASSWD)
        add_text(tar, "etc/group", GROUP)
        tar.add(str(venv), arcname="opt/callgate")


def runtime_options(engine: str, image: str) -> tuple[list[str] | None, str]:
    """The first option set under which a container of ``image`` runs here, and what each
    one tried said. On a nested machine (root without CAP_SYS_RESOURCE, cgroups v1 with a v2
    hybrid) crun refuses the hybrid cgroups and every runtime refuses to raise rlimits:
    the defaults are tried first, then runc, then runc with rlimits no higher than this
    process's."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    limits = ["--ulimit", f"nofile={soft}:{hard}", "--ulimit", "nproc=4096:4096"]
    candidates: list[list[str]] = [[]]
    if shutil.which("runc") is not None and engine.endswith("podman"):
        candidates += [["--runtime", "runc"], ["--runtime", "runc", *limits]]
    candidates.append(limits)
    answers = []
    for options in candidates:
        done = subprocess.run(
            [engine, "run", "--rm", "--network=none", *options, image, "true"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode == 0:
            return ["--network=none", *options], ""
        answers.append(f"{' '.join(options) or 'defaults'}: {done.stderr.strip()[-300:]}")
    return None, "; ".join(answers)


def exists(image: str, podman: str) -> bool:
    return subprocess.run([podman, "image", "exists", image], capture_output=True).returncode == 0


def build(podman: str) -> str:
    """The image (built now unless this checkout's is already there); `CannotBuild` says
    what this machine lacks."""
    image = tag()
    if exists(image, podman):
        return image
    with tempfile.TemporaryDirectory(prefix="callgate-image-") as scratch:
        work = Path(scratch)
        venv = work / "opt-callgate"
        _environment(venv, work / "wheels")
        _rootfs_tar(work / "rootfs.tar", venv)
        _run(
            [
                podman,
                "import",
                "--change",
                "ENV PATH=/opt/callgate/bin:/usr/local/bin:/usr/bin:/bin",
                "--change",
                "ENV HOME=/root",
                "--change",
                'CMD ["sleep", "infinity"]',
                str(work / "rootfs.tar"),
                image,
            ]
        )
    old = subprocess.run(
        [podman, "images", "--format", "{{.Repository}}:{{.Tag}}", REPOSITORY],
        capture_output=True,
        text=True,
    ).stdout.split()
    for stale in old:
        if stale != image:
            subprocess.run([podman, "rmi", "-f", stale], capture_output=True)
    return image


if __name__ == "__main__":
    found = shutil.which("podman") or shutil.which("docker")
    if found is None:
        sys.exit("neither podman nor docker is installed")
    print(build(found))
