"""The contract every task template fulfils."""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

#: One point's words on a scale.
ScaleLabel = Annotated[str, Field(min_length=1, max_length=300)]
#: A template's scale wording: one list of labels, or a list per named part (heatmap: per question).
ScaleWording = list[ScaleLabel] | dict[str, list[ScaleLabel]]


class TemplateError(ValueError):
    """A template name or configuration that cannot be used."""


@dataclass
class ParsedAnswers:
    """A page's form, checked: one answer per slot, or errors keyed by field."""

    answers: list[Any] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class TemplateAgreement:
    """Agreement a template measures itself: one figure, and one per part (None: too few data)."""

    overall: float | None
    parts: dict[str, float | None]


class TaskTemplate(ABC):
    """A kind of task. Subclasses are stateless; options come per campaign."""

    name: ClassVar[str]
    #: Schema of one item's payload in the campaign's items file.
    item_model: ClassVar[type[BaseModel]]
    #: Schema of a gold item's answer key.
    answer_model: ClassVar[type[BaseModel]]
    #: Schema of the campaign's ``template_options`` (checked when the campaign file is read, and
    #: documented in docs/campaigns.md); None: the template declares none and any mapping is taken.
    options_model: ClassVar[type[BaseModel] | None] = None
    #: The aggregation that fits this template's answers.
    aggregation: ClassVar[str] = "majority_vote"
    #: Krippendorff level for agreement ("nominal", "ordinal", "binary" per option, "ordinal_per_key":
    #: ordinal per key of a mapping answer, "rank": ordinal
    #: over each candidate's place in an ordering), None: none fits.
    agreement_level: ClassVar[str | None] = "nominal"
    #: Whether items of this template can carry a gold answer key at all.
    has_gold: ClassVar[bool] = True
    #: Whether giving the same answer to nearly every item is suspicious (straight-lining). True
    #: for a fixed scale whose answers should follow the items; not for answers an honest
    #: worker legitimately repeats ("no mistakes here", the usual category).
    straightlining_suspicious: ClassVar[bool] = False
    #: Whether each assignment sees each slot in an arrangement of its own that only the server
    #: knows (e.g. which description is on the left): ``arrange`` draws it, ``hits.requester.templates.
    #: arrangements`` keeps it, ``arranged_view`` shows it and ``unscramble`` maps answers back.
    arranged: ClassVar[bool] = False
    #: Why a template with right answers still takes no training items (``training:`` in the campaign
    #: file, judged on a practice page); None: it takes them whenever it ``has_gold``.
    no_training_reason: ClassVar[str | None] = None

    def own_agreement(self, session: Session, campaign_id: int) -> TemplateAgreement | None:
        """The campaign's agreement as the template measures it; None: the generic one of ``agreement_level``.

        For answers nested past one label per item (per model and question,
        say), where the template's own study decides what counts.
        """
        return None

    @property
    def directory(self) -> Path:
        """Folder holding this template's ``page.html``."""
        return Path(__file__).parent / self.name

    def page_context(self) -> dict[str, Any]:
        """Extra, answer-free values the page needs (e.g. a rating scale)."""
        return {}

    def scale_wording(self) -> ScaleWording | None:
        """The default words of the answer scale a campaign's ``guidance.scale`` may replace.

        One label per scale point in the order the page lists them, or a list per named part
        (``heatmap``: per question); None: no scale to reword (the default).
        """
        return None

    def reworded_scale(self, wording: ScaleWording) -> dict[str, Any]:
        """Page values (overriding :meth:`page_context`'s) that show ``wording``, already checked
        against :meth:`scale_wording`. Default: none."""
        return {}

    def page_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Values the page needs from the campaign's ``template_options`` (only those: the options may
        hold what workers must not see, such as model providers). Default: none."""
        return {}

    def validate_item(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Check one item's payload against ``item_model``; raises pydantic's error."""
        return self.item_model.model_validate(payload).model_dump()

    def validate_answer_key(self, answer: Any) -> Any:
        return self.answer_model.model_validate(answer).model_dump()

    def check_answer_key(self, answer: Any, item: Mapping[str, Any]) -> None:
        """Checks of a validated gold key that need its item's payload; raise ``ValueError``.

        Called when the campaign's gold file is read. Default: none.
        """
        return None

    def check_campaign(
        self, options: Mapping[str, Any], items: Sequence[Mapping[str, Any]], media: Path | None
    ) -> None:
        """Checks of the campaign's ``template_options`` with its items' payloads; raise ``ValueError``.

        Called when the campaign file is read (``media``: its media folder, if any). Default: none.
        """
        return None

    def slot_view(self, payload: Mapping[str, Any], seed: str) -> dict[str, Any]:
        """What the page gets of one slot's payload (default: all of it).

        ``seed`` is stable for one assignment's slot (and for a preview's), so a
        template may shuffle what it shows and keep that order when the page is
        shown again with errors; it may also drop what workers must not see.
        """
        return dict(payload)

    def arrange(self, payload: Mapping[str, Any], rng: random.Random) -> dict[str, Any]:
        """A new arrangement of one slot for one assignment (JSON), for templates that are ``arranged``."""
        return {}

    def arranged_view(self, payload: Mapping[str, Any], arrangement: Mapping[str, Any]) -> dict[str, Any]:
        """What the page gets of a slot in ``arrangement`` (arranged templates; default: ``slot_view``)."""
        return self.slot_view(payload, "")

    def item_order(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The arrangement that shows a slot as the item lists it (arranged templates; default: none).

        A practice page shows a training item so: its right answer and explanation speak of the item's
        first and second candidate, which must then be the page's left and right, or first and second.
        """
        return {}

    def key_words(self, key: Mapping[str, Any], payload: Mapping[str, Any]) -> str:
        """A gold answer key in words, as a practice page tells a worker the right answer.

        Default: each field's value (a list's values, a mapping's ``name: value`` pairs), fields named
        when there are several. A campaign's training item may give its own words instead.
        """

        def said(value: Any) -> str:
            if isinstance(value, Mapping):
                return ", ".join(f"{k}: {said(v)}" for k, v in value.items())
            if isinstance(value, list | tuple):
                return ", ".join(said(v) for v in value) or "none"
            return str(value)

        parts = [(str(name).replace("_", " "), said(value)) for name, value in key.items()]
        if len(parts) == 1:
            return parts[0][1]
        return "; ".join(f"{name}: {value}" for name, value in parts)

    def unscramble(self, answer: Any, arrangement: Mapping[str, Any], payload: Mapping[str, Any]) -> Any:
        """An answer given on a page in ``arrangement``, in the item's own terms (default: unchanged)."""
        return answer

    @abstractmethod
    def parse_answers(self, form: Mapping[str, str], slots: int) -> ParsedAnswers:
        """Validate a submitted form for a page of ``slots`` items."""

    @abstractmethod
    def score_gold(self, answer: Any, key: Mapping[str, Any], options: Mapping[str, Any]) -> float:
        """How well ``answer`` matches the gold ``key``, from 0 to 1."""

    def check_against_items(self, parsed: ParsedAnswers, items: Sequence[Mapping[str, Any]]) -> ParsedAnswers:
        """Checks that need each slot's item payload (e.g. offsets within its text).

        Called after :meth:`parse_answers` with the page's item payloads in slot
        order; adds errors keyed like ``parse_answers`` does. Default: none.
        """
        return parsed

    def check_submission(
        self, session: Session, campaign_id: int, assignment_id: str, parsed: ParsedAnswers
    ) -> ParsedAnswers:
        """Check answers (page terms) against what the server recorded of this assignment's page.

        For templates whose pages fetch things while the worker works (``heatmap``: the heatmaps
        shown); adds errors keyed like ``parse_answers`` does. Default: none. Never commits.
        """
        return parsed

    def score_gold_item(
        self, answer: Any, key: Mapping[str, Any], item: Mapping[str, Any], options: Mapping[str, Any]
    ) -> float:
        """Like :meth:`score_gold`, for templates whose scoring needs the item's payload."""
        return self.score_gold(answer, key, options)

    def gold_passed(self, score: float, options: Mapping[str, Any]) -> bool:
        """Whether a gold score counts as correct (default: at least the pass mark)."""
        return score >= float(options.get("gold_pass_score", 1.0))

    def answer_fields(self, answers: list[Any]) -> list[tuple[str, str]]:
        """Answers as form fields, the way the page names them (for MTurk's answer XML)."""
        return [(f"answer-{i}", str(a)) for i, a in enumerate(answers)]

    def export_fields(self, answers: list[Any], items: list[Mapping[str, Any]]) -> list[tuple[str, str]]:
        """Stored answers (item terms) as the export's ``Answer.*`` columns; ``items``: the payloads.

        Default: :meth:`answer_fields`, right for templates whose page and item terms are one.
        An ``arranged`` template stores answers in other terms than its page names, and overrides it.
        """
        return self.answer_fields(answers)

    def answers_from_fields(self, fields: Mapping[str, str], slots: int) -> list[Any]:
        """Read answers back from MTurk's stored fields (the marketplace is the authority)."""
        parsed = self.parse_answers(fields, slots)
        if not parsed.ok:
            raise TemplateError(f"stored answer does not validate: {parsed.errors}")
        return parsed.answers
