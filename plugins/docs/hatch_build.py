"""Build hook: callgate's own docs/ go into the wheel as ``callgate_docs/host_docs``.

Built from the repository, the docs are two levels up; built from an sdist, they are
already inside the package (the sdist's ``force-include`` put them there). An editable
install gets no copy: the package then reads the checkout's docs/ directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MARKER = "config.md"


class HostDocsHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        root = Path(self.root)
        if (root / "callgate_docs" / "host_docs" / MARKER).is_file():
            return
        docs = root.parent.parent / "docs"
        if not (docs / MARKER).is_file():
            raise FileNotFoundError(f"callgate's docs/ not found at {docs}: build callgate-docs "
                                    "from the callgate repository or from its sdist")
        build_data["force_include"][str(docs)] = "callgate_docs/host_docs"
