"""An example third-party callgate plugin: ``word_count``, a small read-only tool.

This package is the template for plugin authors, laid out as every callgate plugin is
(docs/writing-a-tool.md, "The layout"): ``plugin.py`` holds the hook implementations,
``tools/`` one module per tool (``tools/word_count.py``), and a family with a config
table keeps its schema in ``config.py``. It uses only the public API (``callgate``), is
discovered through its entry point (see ``pyproject.toml``:
``[project.entry-points.callgate] word_count = "callgate_word_count"``: the package,
which re-exports the hooks of ``plugin.py``), and is tested through the full pipeline
with the ``callgate_session`` fixture.
"""

from .plugin import callgate_register_tools

__all__ = ["callgate_register_tools"]
