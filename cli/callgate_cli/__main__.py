"""``python -m callgate_cli``: the ``callgate`` command."""

import sys

from .cli import main

sys.exit(main())
