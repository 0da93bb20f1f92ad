"""Where callgate's own user documentation is: inside this package, or in the checkout.

A built wheel carries the repository's ``docs/`` as package data
(``callgate_docs/host_docs``, hatch ``force-include``). A source checkout, such as the uv
workspace's editable install, has no copy: there the package reads the repository's
``docs/`` itself, two levels above the plugin, which is always current.
"""

from __future__ import annotations

from pathlib import Path

PACKAGED = "host_docs"
#: A file every callgate docs/ has: how a directory is recognised as callgate's docs.
MARKER = "config.md"


def host_docs_dir() -> Path | None:
    """The directory of callgate's own docs, or ``None`` when neither copy is there."""
    import importlib.resources  # here: importing it is 6 modules registration does not need

    packaged = Path(str(importlib.resources.files(__package__ or "callgate_docs"))) / PACKAGED
    if (packaged / MARKER).is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[3] / "docs"
    if (checkout / MARKER).is_file() and (checkout.parent / "plugins" / "docs").is_dir():
        return checkout
    return None
