"""HIT layouts: a requester's stored HTML, filled in per HIT from ``HITLayoutParameters``.

On MTurk a project's layout got an id (``HITLayoutId``) that CreateHIT and
CreateHITWithHITType accept instead of a ``Question``, with one
``{Name, Value}`` per placeholder. hitforge stores layouts here (created by
the operator, ``hitforge batch layout``, as MTurk's were made in its requester
UI) and turns such a call into an HTMLQuestion with the same substitution as
``hitforge batch publish``: values HTML-escaped, other ``${...}`` untouched.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, Session, mapped_column

from hits.db import MarketBase, UTCDateTime, utcnow
from hits.market.errors import invalid
from hits.market.ids import new_entity_id
from hits.wire.layout import html_question, layout_parameters, missing_columns, substitute


class HITLayout(MarketBase):
    """A requester's HTML layout with ``${name}`` placeholders."""

    __tablename__ = "market_hit_layouts"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    requester_id: Mapped[str] = mapped_column(ForeignKey("market_requesters.id"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    html: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


def create_layout(session: Session, requester_id: str, name: str, html: str) -> HITLayout:
    """Store a layout for ``requester_id``; its id is the ``HITLayoutId`` to publish with."""
    if not html.strip():
        raise ValueError("the layout is empty")
    layout = HITLayout(id=new_entity_id(), requester_id=requester_id, name=name[:128], html=html)
    session.add(layout)
    session.flush()
    return layout


def layout_question(session: Session, requester_id: str, params: dict[str, Any]) -> tuple[str, str]:
    """The HTMLQuestion for a call naming ``HITLayoutId``, and the layout's id.

    Refuses (InvalidParameterValue) a call that also sends a Question, a layout
    that is not the caller's, and parameters that are malformed, repeated, not
    placeholders of the layout, or missing for one of them.
    """
    layout_id = params.get("HITLayoutId")
    if params.get("Question") is not None:
        raise invalid("Provide either Question or HITLayoutId, not both.")
    layout = session.get(HITLayout, layout_id) if isinstance(layout_id, str) else None
    if layout is None or layout.requester_id != requester_id:
        raise invalid(f"HITLayoutId {layout_id} does not exist.")
    given = params.get("HITLayoutParameters") or []
    if not isinstance(given, list):
        raise invalid("HITLayoutParameters must be a list of {Name, Value}.")
    values: dict[str, str] = {}
    for parameter in given:
        name = parameter.get("Name") if isinstance(parameter, dict) else None
        value = parameter.get("Value") if isinstance(parameter, dict) else None
        if not isinstance(name, str) or not isinstance(value, str):
            raise invalid("Each HITLayoutParameter needs a Name and a Value, both strings.")
        if name in values:
            raise invalid(f"HITLayoutParameter {name} is given twice.")
        values[name] = value
    # The same rule as a batch's CSV (hits.wire.layout.Parameters): any placeholder may be
    # given, those in <script> too; those of the markup must be.
    known = layout_parameters(layout.html).names
    unknown = [n for n in values if n not in known]
    if unknown:
        raise invalid(f"HITLayoutParameter {unknown[0]} is not a placeholder of layout {layout.id}.")
    missing = list(dict.fromkeys(p.name for p in missing_columns(layout.html, values)))
    if missing:
        raise invalid(f"HITLayoutParameters lack a value for: {', '.join(missing)}.")
    return html_question(substitute(layout.html, values), 0), layout.id
