"""What the requester side's processes on several hosts agree on, kept in its database."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from hits.db import RequesterBase, UTCDateTime


class Lease(RequesterBase):
    """A duty one process holds at a time (the beat's scheduling), until ``expires_at``.

    The holder renews it well before it expires; a holder that dies stops
    renewing, and once the lease has expired any other process may take it.
    """

    __tablename__ = "rq_leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    #: Who holds it: host name and process id, for people reading the table.
    holder: Mapped[str] = mapped_column(String(200))
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime)
