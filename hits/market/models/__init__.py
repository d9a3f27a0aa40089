"""The marketplace's tables, split by domain. Import from here."""

from hits.market.models.accounts import AccessKey, Requester, SignInFailure, Worker
from hits.market.models.events import MarketEvent
from hits.market.models.ledger import AccountBalance, LedgerEntry
from hits.market.models.qualifications import QualificationType, WorkerQualification
from hits.market.models.recruiting import Invitation, InvitationUse, Payout, PayoutAddress, PayoutRun
from hits.market.models.relations import BonusPayment, WorkerBlock, WorkerMessage
from hits.market.models.requests import (
    NotificationSetting,
    QualificationRequest,
    RequesterOptions,
    RequestToken,
)
from hits.market.models.review import HITReviewPolicies, ReviewRecord
from hits.market.models.work import HIT, Assignment, HITType

__all__ = [
    "HIT",
    "AccessKey",
    "Assignment",
    "AccountBalance",
    "BonusPayment",
    "HITReviewPolicies",
    "HITType",
    "Invitation",
    "InvitationUse",
    "LedgerEntry",
    "MarketEvent",
    "NotificationSetting",
    "Payout",
    "PayoutAddress",
    "PayoutRun",
    "QualificationRequest",
    "QualificationType",
    "RequestToken",
    "ReviewRecord",
    "Requester",
    "RequesterOptions",
    "SignInFailure",
    "Worker",
    "WorkerBlock",
    "WorkerMessage",
    "WorkerQualification",
]
