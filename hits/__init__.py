"""hitforge's domain: the marketplace (``market``), the requester side (``requester``), and
below both what they share (``wire``: MTurk's documents and limits; ``db``, ``money``,
``settings``, ...). ``docs/architecture.md`` is the map.

Nothing in this package imports Flask or Celery, and nothing here commits: the
boundary (a request, a task, a CLI command) owns the transaction.
"""
