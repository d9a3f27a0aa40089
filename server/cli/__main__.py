"""``python -m server.cli``: the ``hitforge`` command."""

import os

from server.cli.main import main

os.environ.setdefault("PYTHONUNBUFFERED", "1")
main()
