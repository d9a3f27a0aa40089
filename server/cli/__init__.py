"""The ``hitforge`` command, one module a group (``main`` builds the command from them).

``sessions`` is the one place a command opens the databases; ``serve`` holds
how the server runs in production. Commands of installed packages (the
demo's) join through the ``hitforge.commands`` entry-point group.
"""
