"""Task templates: how requesters express work.

A template declares its item schema, renders its HIT page, validates answers
on the server, scores gold items and names the aggregation that fits. The
built-in ones register here; third-party packages add theirs through the
``hitforge.templates`` entry-point group, without touching the core.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from hits.requester.templates.base import TaskTemplate, TemplateError


def _builtin() -> dict[str, TaskTemplate]:
    from hits.requester.templates.compare import CompareTemplate
    from hits.requester.templates.heatmap import HeatmapTemplate
    from hits.requester.templates.objects import ObjectsTemplate
    from hits.requester.templates.rank import RankTemplate
    from hits.requester.templates.rating import RatingTemplate
    from hits.requester.templates.refine import RefineTemplate
    from hits.requester.templates.select import SelectTemplate
    from hits.requester.templates.spans import SpansTemplate
    from hits.requester.templates.sxs import SxsTemplate
    from hits.requester.templates.target import TargetTemplate
    from hits.requester.templates.write import WriteTemplate

    return {
        t.name: t
        for t in (
            RatingTemplate(),
            SelectTemplate(),
            WriteTemplate(),
            SpansTemplate(),
            TargetTemplate(),
            CompareTemplate(),
            SxsTemplate(),
            RefineTemplate(),
            ObjectsTemplate(),
            RankTemplate(),
            HeatmapTemplate(),
        )
    }


@cache
def available_templates() -> dict[str, TaskTemplate]:
    """Every template by name: built-ins, then those from installed packages.

    Read once per process: scanning the installed packages' entry points costs
    milliseconds, and a package installed later needs a restart anyway.
    """
    found = _builtin()
    for ep in entry_points(group="hitforge.templates"):
        template = ep.load()()
        found[template.name] = template
    return found


def get_template(name: str) -> TaskTemplate:
    """The template called ``name``; an unknown name lists the known ones."""
    if name == "batch":
        # A layout batch's (hits.requester.batches): read by the review pipeline, never offered for
        # campaign files or demos, so it is kept out of ``available_templates``.
        from hits.requester.templates.batch import batch_template

        return batch_template()
    templates = available_templates()
    if name not in templates:
        raise TemplateError(f"unknown template {name!r}; choose one of: {', '.join(sorted(templates))}")
    return templates[name]


__all__ = ["TaskTemplate", "TemplateError", "available_templates", "get_template"]
