"""Every template's page: gold slots look exactly like the others, and no answer or id leaks."""

from __future__ import annotations

import re

import pytest
import requests
from bs4 import BeautifulSoup, Tag

from tests.helpers import launch_template_campaign, names_in
from tests.server.worker_helpers import accept_framed

#: A run of 20 or more letters, digits, '-' and '_' with a digit in it: an id or token, never a word.
OPAQUE = re.compile(r"(?=[A-Za-z_-]*\d)[A-Za-z0-9_-]{20,}")
SLOT_CLASS = {
    "rating": "pair",
    "select": "pair",
    "spans": "pair",
    "target": "target-item",
    "compare": "compare-item",
    "sxs": "sxs-item",
    "objects": "objects-item",
}


@pytest.mark.parametrize("template", sorted(SLOT_CLASS))
def test_gold_slots_are_indistinguishable(
    template, tmp_path, live_server, market, requester_sessions
) -> None:
    _, _, hit_ids = launch_template_campaign(
        tmp_path, market, requester_sessions, live_server.url, template, hits=1, name=f"hidden-{template}"
    )
    # The page of a real assignment, as the worker site frames it.
    _, params = accept_framed(live_server.url, hit_ids[0], f"hidden-{template}")
    page = requests.get(live_server.url + "/tasks/hit", params=params, timeout=30).text
    assert "<form" in page, page[:500]
    # Opaque ids and tokens (assignment and HIT ids, the capability in turkSubmitTo) are random
    # letters and digits: one now and then holds "gold" by chance (CI saw "...esgoldlip...").
    lowered = OPAQUE.sub("", page).lower()
    for leak in ("gold", "items-0", '"answer"', 'correct": [', 'category": '):
        assert leak not in lowered, f"{leak!r} appears on the {template} page"
    slots = [t for t in BeautifulSoup(page, "html.parser").find_all("fieldset", class_=SLOT_CLASS[template])]
    assert len(slots) >= 2

    def shape(tag: Tag) -> list[tuple[str, tuple[str, ...]]]:
        # Element names and attribute names in order: values (texts, ids) differ by design.
        return [(t.name, tuple(sorted(t.attrs))) for t in tag.find_all(True)]

    # compare items differ in their number of candidates (gold and ordinary alike): same count, same shape.
    by_size: dict[int, set[str]] = {}
    for s in slots:
        by_size.setdefault(len(s.find_all(class_="candidate")), set()).add(str(shape(s)))
    assert all(len(shapes) == 1 for shapes in by_size.values())
    if template in ("compare", "sxs"):
        from demo.tasks.compare import SYSTEMS as COMPARE_SYSTEMS
        from demo.tasks.sxs import SYSTEMS as SXS_SYSTEMS

        systems = {**COMPARE_SYSTEMS, **SXS_SYSTEMS}
        assert not names_in(page, systems)  # who wrote what stays hidden
