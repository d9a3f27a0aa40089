"""The review queue's count of held work can be read through the partial index of held submissions.

Without it (issue 27's growth table) the queue's first page read every
submission of the visible campaigns at each request: 57 ms at 10,000 HITs,
1,049 ms at 1,000,000. Each database is asked for its plan of the very query
the queue runs; PostgreSQL is told to avoid sequential scans, since on a
small table it would rightly prefer one, and the question is whether the
index *can* serve the query (a bound ``'held'`` would keep it from matching).
"""

from __future__ import annotations

from sqlalchemy import select, text

from hits.db import session_scope
from hits.requester.quality.review_queue import held_counts
from hits.requester.tables.campaigns import Campaign


def test_the_held_count_is_planned_on_the_partial_index(requester_sessions) -> None:
    with session_scope(requester_sessions) as session:
        query = held_counts(select(Campaign.id))
        bind = session.get_bind()
        compiled = query.compile(bind, compile_kwargs={"literal_binds": True})
        if bind.dialect.name == "sqlite":
            plan = " ".join(str(row[-1]) for row in session.execute(text(f"EXPLAIN QUERY PLAN {compiled}")))
        else:
            session.execute(text("SET LOCAL enable_seqscan = off"))
            plan = " ".join(str(row[0]) for row in session.execute(text(f"EXPLAIN {compiled}")))
    assert "ix_rq_submissions_held" in plan, plan
