"""The marketplace's tables, split by domain. Import from here."""

from hits.market.models.accounts import AccessKey, Requester, Worker
from hits.market.models.ledger import LedgerEntry
from hits.market.models.qualifications import QualificationType, WorkerQualification
from hits.market.models.work import HIT, Assignment, HITType

__all__ = [
    "HIT",
    "AccessKey",
    "Assignment",
    "HITType",
    "LedgerEntry",
    "QualificationType",
    "Requester",
    "Worker",
    "WorkerQualification",
]
