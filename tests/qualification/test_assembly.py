"""Assembling papers: reproducible, sampled per section, shuffled, and leak-free views."""

from __future__ import annotations

import json
from dataclasses import replace

from qualification.assembly import Paper, assemble, worker_view
from qualification.bank import Bank


def test_same_seed_same_paper_and_json_round_trip(bank: Bank) -> None:
    paper = assemble(bank, 1234)
    assert assemble(bank, 1234) == paper
    assert Paper.from_json(json.loads(json.dumps(paper.to_json()))) == paper


def test_different_seeds_give_different_papers(bank: Bank) -> None:
    papers = {tuple((i.item_id, i.choice_order) for i in assemble(bank, seed).items) for seed in range(20)}
    assert len(papers) == 20


def test_paper_draws_the_section_sample_without_repeats(bank: Bank) -> None:
    paper = assemble(bank, 7)
    for section in bank.sections:
        ids = [i.item_id for i in paper.items if i.section == section.id]
        assert len(ids) == len(set(ids)) == section.sample
        assert all(bank.items[i].section == section.id for i in ids)


def test_item_order_and_choice_order_are_shuffled(bank: Bank) -> None:
    first_items, orders = set(), set()
    for seed in range(40):
        paper = assemble(bank, seed)
        first_items.add(paper.items[0].item_id)
        orders.update(i.choice_order for i in paper.items if i.section == "spelling")
    assert len(first_items) > 10
    assert orders == {("correct", "incorrect"), ("incorrect", "correct")}


def test_worker_view_follows_the_paper(bank: Bank) -> None:
    paper = assemble(bank, 99)
    view = worker_view(bank, paper)
    questions = [q for s in view.sections for q in s.questions]
    assert [q.question_id for q in questions] == [i.item_id for i in paper.items]
    assert [q.number for q in questions] == list(range(1, len(paper.items) + 1))
    for question, entry in zip(questions, paper.items, strict=True):
        assert tuple(c.id for c in question.choices) == entry.choice_order
    judged = [q for q in questions if q.section == "judgment"]
    assert all(q.image and q.alt and q.prompt for q in judged)


def _flip(bank: Bank) -> Bank:
    """The same bank with every answer moved to another choice, explanations changed."""
    items = {}
    for item_id, item in bank.items.items():
        other = next(c.id for c in bank.choices(item) if c.id != item.answer)
        items[item_id] = item.model_copy(update={"answer": other, "explanation": "flipped"})
    return replace(bank, items=items)


def test_worker_view_contains_no_answers(bank: Bank) -> None:
    for seed in range(10):
        paper = assemble(bank, seed)
        view = worker_view(bank, paper)
        text = json.dumps(view.to_json())
        # No answer-bearing field at all ...
        for key in ('"answer"', '"explanation"', '"correct_items"', '"passed"', '"score"'):
            assert key not in text
        for entry in paper.items:
            explanation = bank.items[entry.item_id].explanation
            assert explanation is None or explanation not in text
        # ... and nothing in it depends on the key: flipping every answer gives the identical view.
        assert json.dumps(worker_view(_flip(bank), paper).to_json()) == text
