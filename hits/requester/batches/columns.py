"""The columns of MTurk's batch-results CSV, in MTurk's order.

Taken from headers of ``Batch_*_batch_results.csv`` files that MTurk's requester
UI produced (see docs/migrating.md): the HIT's columns, the assignment's, the
worker's approval rates, then ``Input.<column>`` in the input CSV's order,
``Answer.<field>`` in alphabetical order, and the ``Approve`` / ``Reject``
columns a requester fills in before handing the file back.
"""

from __future__ import annotations

HIT_COLUMNS = [
    "HITId",
    "HITTypeId",
    "Title",
    "Description",
    "Keywords",
    "Reward",
    "CreationTime",
    "MaxAssignments",
    "RequesterAnnotation",
    "AssignmentDurationInSeconds",
    "AutoApprovalDelayInSeconds",
    "Expiration",
    "NumberOfSimilarHITs",
    "LifetimeInSeconds",
]
ASSIGNMENT_COLUMNS = [
    "AssignmentId",
    "WorkerId",
    "AssignmentStatus",
    "AcceptTime",
    "SubmitTime",
    "AutoApprovalTime",
    "ApprovalTime",
    "RejectionTime",
    "RequesterFeedback",
    "WorkTimeInSeconds",
    "LifetimeApprovalRate",
    "Last30DaysApprovalRate",
    "Last7DaysApprovalRate",
]
#: Every fixed column before the ``Input.*`` ones.
LEADING_COLUMNS = HIT_COLUMNS + ASSIGNMENT_COLUMNS
#: The requester's review marks, always last.
REVIEW_COLUMNS = ["Approve", "Reject"]


def leading_subset(names: set[str]) -> list[str]:
    """The fixed columns among ``names``, in MTurk's order (for exports that fill only some)."""
    return [c for c in LEADING_COLUMNS if c in names]


def batch_header(input_columns: list[str], answer_fields: list[str]) -> list[str]:
    """The whole header of a batch-results file."""
    return [
        *LEADING_COLUMNS,
        *(f"Input.{c}" for c in input_columns),
        *(f"Answer.{f}" for f in sorted(answer_fields)),
        *REVIEW_COLUMNS,
    ]
