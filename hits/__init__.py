"""hitforge's domain: the marketplace, campaigns, task templates and quality control.

Nothing in this package imports Flask or Celery, and nothing here commits: the
boundary (a request, a task, a CLI command) owns the transaction.
"""
