"""Project layouts and batches, as in MTurk's requester UI.

A batch is one HTML layout with ``${column}`` placeholders and one CSV: one
HITType, one HTMLQuestion HIT per CSV row, and MTurk's batch-results CSV back,
which the requester edits (``Approve`` / ``Reject``) and hands in again.
"""
