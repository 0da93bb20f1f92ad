"""The skills plugin's tools: ``read_skill``, ``install_skill``, ``install_source``, and
``run_skill`` with ``read_only_skill`` (`run_skill`), one module each."""
