"""``hitforge qualification``: validate, show, export and grade qualification tests.

Listed in ``COMMANDS`` of ``server/cli/main.py`` (``publish`` lives in
``qualification_publish``). Every command that reads a bank takes its path as
the first argument, BANK (``show BANK``, ``create BANK``, ``grade BANK
ANSWERS``, ``publish BANK``).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from qualification.bank import Bank

# The ``qualification`` package is imported in the commands: it loads the XML schemas (and more),
# which ``hitforge qualification --help`` does not need.

console = Console()
#: The bank, always the first argument; the default bank is qualification/banks/default.yaml.
BANK_ARGUMENT = click.argument("bank_path", metavar="BANK", type=click.Path(dir_okay=False, path_type=Path))


def load_or_exit(path: Path) -> Bank:
    """The bank at ``path``, or every problem it has printed and exit status 1."""
    from hits.requester.fileerrors import InputFileErrors
    from qualification.bank import load_bank

    try:
        return load_bank(path)
    except InputFileErrors as exc:
        for error in exc.errors:
            console.print(f"[red]{error}[/red]", highlight=False)
        sys.exit(1)


@click.group()
def qualification() -> None:
    """Qualification tests: item banks, MTurk export, grading, item analysis."""


@qualification.command("create")
@BANK_ARGUMENT
@click.option(
    "--export",
    "export_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write test.xml and answerkey.xml (MTurk QuestionForm and AnswerKey), and media/, here.",
)
@click.option("--seed", default=0, show_default=True, type=int, help="Which paper to export.")
@click.option(
    "--media-url",
    default=None,
    help="http(s) URL where you will publish the files of DIR/media/ (needed when the test has pictures).",
)
def create(bank_path: Path, export_dir: Path | None, seed: int, media_url: str | None) -> None:
    """Validate BANK and print a summary; with --export DIR, write it as an MTurk-native test."""
    from qualification.assembly import assemble
    from qualification.mturk import answer_key, question_form, validate_answer_key, validate_question_form

    bank = load_or_exit(bank_path)
    _summary(bank)
    if export_dir is None:
        return
    paper = assemble(bank, seed)
    pictures = {n: bank.media[n] for e in paper.items if (n := bank.image_name(bank.items[e.item_id]))}
    if pictures and not media_url:
        raise click.UsageError(
            f"this test shows {len(pictures)} pictures: give --media-url, the http(s) URL where you "
            f"will publish the files written to {export_dir / 'media'}"
        )
    if media_url and not media_url.startswith(("https://", "http://")):
        raise click.BadParameter("must start with https:// or http://", param_hint="--media-url")
    test, key = question_form(bank, paper, media_url or ""), answer_key(bank, paper)
    validate_question_form(test)
    validate_answer_key(key)
    export_dir.mkdir(parents=True, exist_ok=True)
    (export_dir / "test.xml").write_text(test, encoding="utf-8")
    (export_dir / "answerkey.xml").write_text(key, encoding="utf-8")
    if pictures:
        # Under their served names, the names test.xml links to: upload the folder as it is.
        (export_dir / "media").mkdir(exist_ok=True)
        for name, file in pictures.items():
            shutil.copyfile(file, export_dir / "media" / name)
    console.print(
        f"wrote {export_dir / 'test.xml'} and {export_dir / 'answerkey.xml'} (seed {seed}, valid)"
        + (f" and {len(pictures)} pictures in {export_dir / 'media'}" if pictures else "")
    )


@qualification.command("show")
@BANK_ARGUMENT
def show(bank_path: Path) -> None:
    """Print BANK's sections, item counts and thresholds."""
    _summary(load_or_exit(bank_path))


def _summary(bank: Bank) -> None:
    from qualification.grading import guessing_pass_probability

    table = Table(title=f"{bank.title} ({bank.path.name})")
    for column in ("section", "kind", "items", "drawn", "pass at"):
        table.add_column(column)
    for s in bank.sections:
        table.add_row(
            s.id, s.kind, str(len(bank.items_in(s.id))), str(s.sample), f"{s.pass_threshold}/{s.sample}"
        )
    console.print(table)
    p = guessing_pass_probability(bank)
    console.print(f"overall pass score: {bank.overall_pass}; chance a random guesser passes: {float(p):.3g}")


@qualification.command("grade")
@BANK_ARGUMENT
@click.option("--seed", required=True, type=int, help="The seed the worker's paper was assembled from.")
@click.argument("answers_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def grade_command(bank_path: Path, seed: int, answers_file: Path) -> None:
    """Grade ANSWERS_FILE, a JSON object {question_id: choice_id}, for BANK's paper of --seed."""
    from qualification.assembly import assemble
    from qualification.grading import grade

    bank = load_or_exit(bank_path)
    try:
        answers = json.loads(answers_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise click.ClickException(f"{answers_file}: not valid JSON: {exc.msg}") from exc
    if not isinstance(answers, dict) or not all(isinstance(v, str) for v in answers.values()):
        raise click.ClickException(f"{answers_file}: expected an object mapping question ids to choice ids")
    result = grade(bank, assemble(bank, seed), answers)
    for s in result.sections:
        mark = "[green]pass[/green]" if s.passed else "[red]fail[/red]"
        console.print(f"{s.section}: {s.correct}/{s.total} (needs {s.threshold}) {mark}")
    verdict = "[green]PASSED[/green]" if result.passed else "[red]FAILED[/red]"
    console.print(
        f"score {result.score} (needs {bank.overall_pass}): {verdict}; qualification value {result.value}"
    )
    if result.unanswered:
        console.print(f"unanswered: {', '.join(result.unanswered)}")


@qualification.command("items")
@click.argument("attempts_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def items(attempts_file: Path) -> None:
    """Item analysis from a JSONL file: one attempt per line, {"correct": {item_id: true|false}}."""
    from hits.requester.fileerrors import InputFileError, read_jsonl
    from qualification.analysis import item_analysis

    attempts: list[dict[str, bool]] = []
    try:
        for number, row in read_jsonl(attempts_file):
            correct = row.get("correct")
            if not isinstance(correct, dict) or not all(isinstance(v, bool) for v in correct.values()):
                raise InputFileError(
                    attempts_file, number, "correct", "expected an object of item id -> true/false"
                )
            attempts.append(correct)
    except InputFileError as exc:
        raise click.ClickException(str(exc)) from exc
    table = Table(title=f"item analysis over {len(attempts)} attempts")
    for column in ("item", "n", "p", "r(pb)", "flags"):
        table.add_column(column)
    for stat in item_analysis(attempts):
        r = "-" if stat.discrimination is None else f"{stat.discrimination:.2f}"
        table.add_row(stat.item_id, str(stat.responses), f"{stat.p_value:.2f}", r, ", ".join(stat.flags))
    console.print(table)
