"""The task template of a layout batch, as the review pipeline sees it.

A batch's HITs are the requester's own HTML, so this template renders no page
and checks no answer: it only tells the pipeline how to read an assignment
(one slot per HIT, the answer being every field the form posted) and how to
score a gold row (:mod:`hits.requester.templates.batch.gold`). It is registered like the
built-in templates so that sync, grading, decisions and the QA queue handle
batches with the same code as campaigns.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, RootModel

from hits.requester.templates.base import ParsedAnswers, TaskTemplate, TemplateError
from hits.requester.templates.batch.gold import score_fields

#: The name of the template on a batch's campaign row.
BATCH_TEMPLATE = "batch"


class BatchItem(BaseModel):
    """A CSV row's input cells (any columns)."""

    model_config = ConfigDict(extra="allow")


class BatchGoldKey(RootModel[dict[str, str]]):
    """A gold row's expected answer per form field."""


class BatchLayoutTemplate(TaskTemplate):
    """Answers of a requester's HTMLQuestion layout: one form per HIT, gold scored by field equality."""

    name: ClassVar[str] = BATCH_TEMPLATE
    item_model: ClassVar[type[BaseModel]] = BatchItem
    answer_model: ClassVar[type[BaseModel]] = BatchGoldKey
    # Forms mix free text and choices: no one label to aggregate or agree on.
    agreement_level: ClassVar[str | None] = None

    def validate_item(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Refused: batches are published with ``hitforge batch publish``, not a campaign file."""
        raise TemplateError(
            "the 'batch' template belongs to layouts published with `hitforge batch publish`; "
            "a campaign file cannot use it"
        )

    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        """The posted form as the HIT's one answer (the page is the requester's; nothing to check)."""
        return ParsedAnswers([dict(form)])

    def answers_from_fields(self, fields: Mapping[str, str], slots: int) -> list[Any]:
        """Every stored field, as one answer."""
        return [dict(fields)]

    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        """The share of the gold row's fields answered as expected."""
        return score_fields(answer if isinstance(answer, Mapping) else {}, key, options)

    def gold_passed(self, score: float, options: Mapping[str, Any]) -> bool:
        """At least the batch's ``gold_pass_share`` of the row's fields right (default: all)."""
        # The slack absorbs float rounding of the share (7 of 10 fields right at a pass share of 0.7).
        return score >= float(options.get("gold_pass_score", 1.0)) - 1e-9


@cache
def batch_template() -> BatchLayoutTemplate:
    """The one instance (templates are stateless)."""
    return BatchLayoutTemplate()
