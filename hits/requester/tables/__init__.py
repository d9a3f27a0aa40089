"""The requester database's tables, below all the code that reads and writes them.

One module per area (``campaigns``, ``batches``, ``workflows``, ...); a module
here imports nothing of the requester side but other tables, so every package
above may use any table without importing another package's logic.
"""

# The campaign counters keep themselves through session events registered on import: importing any
# table module imports this package first, so no process has ``Submission`` without them.
from hits.requester.tables import counters as _counters  # noqa: F401
