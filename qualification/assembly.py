"""Assembling one worker's paper from a bank, reproducibly from an integer seed.

``assemble(bank, seed)`` draws ``section.sample`` items from each section,
shuffles their order within the section and the order of each item's choices.
The paper holds only ids and orders, so it can be stored as JSON and the same
seed always gives the same paper. ``worker_view(bank, paper)`` is what a
worker may see: text, images and choices, never answers or explanations.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from typing import Any

from qualification.bank import Bank


@dataclass(frozen=True)
class PaperItem:
    """One question on a paper: the bank item and the order its choices are shown in."""

    item_id: str
    section: str
    choice_order: tuple[str, ...]


@dataclass(frozen=True)
class Paper:
    """One worker's test: the seed it came from and its questions in display order."""

    seed: int
    items: tuple[PaperItem, ...]

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "items": [asdict(item) for item in self.items]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Paper:
        return cls(
            int(data["seed"]),
            tuple(
                PaperItem(str(i["item_id"]), str(i["section"]), tuple(i["choice_order"]))
                for i in data["items"]
            ),
        )


def assemble(bank: Bank, seed: int) -> Paper:
    """The paper for ``seed``: a pure function of the bank and the seed."""
    rng = random.Random(f"hitforge-qualification:{seed}")
    out: list[PaperItem] = []
    for section in bank.sections:
        pool = sorted(bank.items_in(section.id), key=lambda item: item.id)
        for item in rng.sample(pool, section.sample):
            order = [c.id for c in bank.choices(item)]
            rng.shuffle(order)
            out.append(PaperItem(item.id, section.id, tuple(order)))
    return Paper(seed, tuple(out))


@dataclass(frozen=True)
class ViewChoice:
    id: str
    text: str


@dataclass(frozen=True)
class ViewQuestion:
    """A question as the worker sees it. ``question_id`` is the form field name.

    ``image`` is the picture's served name (``qualification.media``), not its path in the bank.
    """

    question_id: str
    number: int
    section: str
    sentence: str | None
    prompt: str | None
    image: str | None
    alt: str | None
    choices: tuple[ViewChoice, ...]


@dataclass(frozen=True)
class ViewSection:
    id: str
    kind: str
    title: str
    instructions: str
    questions: tuple[ViewQuestion, ...]


@dataclass(frozen=True)
class WorkerView:
    """The whole test as a worker sees it: safe to render or serialize."""

    title: str
    seed: int
    sections: tuple[ViewSection, ...]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def worker_view(bank: Bank, paper: Paper) -> WorkerView:
    """The worker-facing test for ``paper``. It carries no answers or explanations."""
    number = 0
    sections: list[ViewSection] = []
    for section in bank.sections:
        questions: list[ViewQuestion] = []
        for entry in (p for p in paper.items if p.section == section.id):
            number += 1
            item = bank.items[entry.item_id]
            texts = {c.id: c.text for c in bank.choices(item)}
            questions.append(
                ViewQuestion(
                    question_id=item.id,
                    number=number,
                    section=section.id,
                    sentence=item.sentence,
                    prompt=item.prompt,
                    image=bank.image_name(item),
                    alt=item.alt,
                    choices=tuple(ViewChoice(cid, texts[cid]) for cid in entry.choice_order),
                )
            )
        sections.append(
            ViewSection(
                section.id,
                section.kind,
                section.title or section.id.title(),
                section.instructions,
                tuple(questions),
            )
        )
    return WorkerView(bank.title, paper.seed, tuple(sections))
