"""The QA and requester dashboard: sign-in with roles, flagged workers, evidence, decisions.

``base`` is the frame (blueprint, sign-in, role checks); the pages, each adding
its routes to ``base.bp``: ``views`` (campaigns, results), ``campaign_pages`` (a
campaign's progress, plots, items and controls), ``review_pages`` (the QA queue,
evidence, decisions), ``action_pages`` (a reviewer's other actions on a worker),
``spot_pages`` (spot checks of approved work), ``audit_pages``,
``workflow_pages``, ``launch_pages`` (uploading a campaign's zip, its check and launch) and
``relay_pages`` (a recruiting campaign's relays to Prolific, and resolving the held ones).
"""

from __future__ import annotations

from flask import Flask

from server.requester.dashboard import (
    action_pages,
    audit_pages,
    campaign_pages,
    launch_pages,
    project_launch,
    relay_pages,
    review_pages,
    spot_pages,
    views,
    workflow_pages,
)
from server.requester.dashboard.base import bp

__all__ = [
    "action_pages",
    "audit_pages",
    "campaign_pages",
    "init_app",
    "launch_pages",
    "project_launch",
    "relay_pages",
    "review_pages",
    "spot_pages",
    "views",
    "workflow_pages",
]


def init_app(app: Flask) -> None:
    """Register the dashboard on ``app``."""
    app.jinja_env.globals["workflow_stage_ids"] = workflow_pages.workflow_stage_ids
    app.register_blueprint(bp)
