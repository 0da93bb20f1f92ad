"""Build hook: callgate's docs/ pages go into the wheel and sdist as ``callgate_docs/host_docs``.

Built from the repository, the docs are two levels up; a wheel built from an sdist finds
them already inside the package (this hook put them there). Only the Markdown pages are
copied: the docs tool serves text, and the pages' screenshots (docs/img) would only weigh.
An editable install gets no copy: the package then reads the checkout's docs/ directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MARKER = "config.md"


class HostDocsHook(BuildHookInterface):  # type: ignore[misc]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name not in ("wheel", "sdist") or version == "editable":
            return
        root = Path(self.root)
        if (root / "callgate_docs" / "host_docs" / MARKER).is_file():
            return
        docs = root.parent.parent / "docs"
        if not (docs / MARKER).is_file():
            raise FileNotFoundError(f"callgate's docs/ not found at {docs}: build callgate-docs "
                                    "from the callgate repository or from its sdist")
        for page in sorted(docs.glob("*.md")):
            build_data["force_include"][str(page)] = f"callgate_docs/host_docs/{page.name}"
