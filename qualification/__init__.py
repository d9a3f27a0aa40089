"""Qualification tests (Hodosh-style): spelling, grammar and judging image descriptions.

Pure domain code: no Flask, no Celery, no database. Callers (a Flask
blueprint, a Celery task, the ``hitforge qualification`` CLI) own storage and
transactions and pass state in. The API a worker-site blueprint needs:

Load once (e.g. at app start)::

    bank = load_bank(DEFAULT_BANK)          # raises InputFileErrors listing every problem

Start an attempt::

    decision = can_start(records, now, policy)   # records: list[AttemptRecord] for this worker
    if not decision: flash(decision.reason)
    seed = secrets.randbelow(2**31)              # store seed + started_at in the attempt row
    paper = assemble(bank, seed)                 # deterministic: re-derive it from the seed any time
    view = worker_view(bank, paper)              # render this; it has no answers or explanations

Submit::

    decision = can_submit(record, now, policy)   # refuses a second submission or a late one
    result = grade(bank, assemble(bank, seed), answers)   # answers: {question_id: choice_id}
    result.score        # 0..100, the share of right answers rounded down
    result.passed       # every section threshold and bank.overall_pass met
    result.value        # the qualification's IntegerValue: the score if passed, else 0
    result.correct_items  # {item_id: bool}: store it for item analysis

Report and export::

    item_analysis([attempt.correct_items, ...])  # -> list[ItemStats] with flags
    guessing_pass_probability(bank)              # exact Fraction
    question_form(bank, paper, media_url), answer_key(bank, paper)   # MTurk Test + AnswerKey XML
    grade_answers(answer_key_xml, question_form_answers_xml)         # MTurk's AnswerKey scoring

Images of judgment items are files relative to the bank (``bank.image_path(item)``).
A media route serves only ``bank.media`` (served name -> file), looked up by the
served names ``WorkerView`` and the QuestionForm export use (``qualification.media``).
The bank format is documented in ``docs/qualification.md``.
"""

from qualification.analysis import ItemStats, item_analysis
from qualification.assembly import Paper, PaperItem, WorkerView, assemble, worker_view
from qualification.bank import DEFAULT_BANK, Bank, Choice, Item, Section, load_bank
from qualification.grading import GradeResult, SectionResult, grade, guessing_pass_probability
from qualification.mturk import answer_key, grade_answers, question_form
from qualification.policy import AttemptRecord, Decision, Policy, can_start, can_submit

__all__ = [
    "DEFAULT_BANK",
    "AttemptRecord",
    "Bank",
    "Choice",
    "Decision",
    "GradeResult",
    "Item",
    "ItemStats",
    "Paper",
    "PaperItem",
    "Policy",
    "Section",
    "SectionResult",
    "WorkerView",
    "answer_key",
    "assemble",
    "can_start",
    "can_submit",
    "grade",
    "grade_answers",
    "guessing_pass_probability",
    "item_analysis",
    "load_bank",
    "question_form",
    "worker_view",
]
