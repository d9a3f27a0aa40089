"""The requester database's tables, below all the code that reads and writes them.

One module per area (``campaigns``, ``batches``, ``workflows``, ...); a module
here imports nothing of the requester side but other tables, so every package
above may use any table without importing another package's logic.
"""
