"""Fixtures of the template campaign tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from demo.crowd import Bot, Profile
from demo.tasks import get_demo_task
from tests.helpers import launch_template_campaign

CarefulCampaign = Callable[..., tuple[int, Any, list[str]]]


@pytest.fixture
def careful_campaign(tmp_path, live_server, market, requester_sessions) -> CarefulCampaign:  # type: ignore[no-untyped-def]
    """Launch a demo campaign of a template in ``tmp_path`` and let two careful workers do every HIT.

    Call it as ``careful_campaign(template, hits=N, name=...)``; it returns (campaign id, truth,
    HIT ids). assignments_per_hit is 2, so the two workers answer every item of every HIT.
    """

    def launch(template: str, *, hits: int, name: str) -> tuple[int, Any, list[str]]:
        campaign_id, truth, hit_ids = launch_template_campaign(
            tmp_path, market, requester_sessions, live_server.url, template, hits=hits, name=name
        )
        fill_form = get_demo_task(template).fill_form
        for n in range(2):
            careful = Profile("perfect", 1.0)
            bot = Bot(live_server.url, f"careful-{n}", careful, truth, seed=n, fill_form=fill_form)
            bot.title_filter = name  # the session's other tests publish HITs on the same marketplace
            result = bot.run(max_hits=hits)
            assert result.errors == [] and result.submitted == hits, result
        return campaign_id, truth, hit_ids

    return launch
