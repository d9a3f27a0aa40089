"""``hitforge batch``: MTurk requester-UI projects (a layout and a CSV) published and reviewed."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from hits.settings import load_settings
from server.cli.cdn import check as check_page
from server.cli.cdn import warn_unserved
from server.cli.sessions import open_sessions

console = Console(stderr=True)


def _fail(message: object) -> None:
    # Unwrapped: a file path and its line stay on one line, for people and for grep.
    console.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    sys.exit(2)


_LOCALE = re.compile(r"^[A-Z]{2}(-[A-Z0-9]{1,3})?$")


def parse_requirement(text: str) -> dict[str, Any]:
    """``TYPEID:Comparator[:value,value...]`` as a QualificationRequirement."""
    from hits.market.validation import comparators

    parts = text.split(":")
    if len(parts) not in (2, 3) or parts[1] not in comparators():
        raise click.BadParameter(
            f"{text!r}: write QUALIFICATION_TYPE_ID:COMPARATOR[:VALUE,...], COMPARATOR one of "
            + ", ".join(comparators()),
            param_hint="--qualification",
        )
    requirement: dict[str, Any] = {
        "QualificationTypeId": parts[0],
        "Comparator": parts[1],
        "ActionsGuarded": "DiscoverPreviewAndAccept",
    }
    if len(parts) == 3:
        values = parts[2].split(",")
        if all(_LOCALE.match(v) for v in values):
            # Locale (00000000000000000071) takes countries, with an optional subdivision: US, US-CA.
            requirement["LocaleValues"] = [
                {"Country": c, **({"Subdivision": s} if s else {})}
                for c, _, s in (v.partition("-") for v in values)
            ]
            return requirement
        try:
            requirement["IntegerValues"] = [int(v) for v in values]
        except ValueError:
            raise click.BadParameter(
                f"{text!r}: values must be integers, or countries such as US or US-CA",
                param_hint="--qualification",
            ) from None
    return requirement


def _sessions():  # type: ignore[no-untyped-def]

    return open_sessions()


def _batch_id(sessions, name: str) -> int:  # type: ignore[no-untyped-def]
    from sqlalchemy import select

    from hits.db import session_scope
    from hits.requester.tables.batches import Batch

    with session_scope(sessions) as session:
        found = session.scalar(select(Batch.id).where(Batch.name == name))
    if found is None:
        _fail(f"no batch named {name!r}")
    return int(found)  # type: ignore[arg-type]


@click.group()
def batch() -> None:
    """Projects as in MTurk's requester UI: an HTML layout published over a CSV."""


@batch.command("publish")
@click.argument("layout", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("input_csv", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--name", help="The batch's name (default: the CSV's file name without .csv).")
@click.option(
    "--settings",
    "settings_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="YAML with title, description, keywords, reward, assignments, lifetime_seconds, "
    "assignment_duration_seconds, auto_approval_delay_seconds, frame_height, qualification_requirements, "
    "gold_tolerance, gold_field_tolerance, gold_normalise_text, gold_pass_share, "
    "quality (as a campaign file's).",
)
@click.option("--title")
@click.option("--description")
@click.option("--keywords")
@click.option("--reward", help="Per assignment, in USD (e.g. 0.25).")
@click.option(
    "--budget", help="All the batch may spend, in USD (default: rewards and fees; above it: bonuses)."
)
@click.option("--assignments", type=int, help="Assignments per HIT (workers per row).")
@click.option("--lifetime", "lifetime_seconds", type=int, help="Seconds the HITs stay listed.")
@click.option("--duration", "assignment_duration_seconds", type=int, help="Seconds a worker has.")
@click.option("--auto-approval-delay", "auto_approval_delay_seconds", type=int)
@click.option("--frame-height", type=int)
@click.option(
    "--gold-tolerance",
    type=float,
    help="Gold rows (Gold.<field> columns): how far a numeric answer may be from the expected one.",
)
@click.option(
    "--gold-normalise-text",
    is_flag=True,
    default=None,
    help="Gold rows: compare text with whitespace collapsed and case ignored.",
)
@click.option(
    "--gold-pass-share",
    type=float,
    help="Gold rows: the share of a row's checked fields that must be right (default 1: all).",
)
@click.option(
    "--qualification",
    "qualifications",
    multiple=True,
    help="TYPEID:COMPARATOR[:VALUE,...], repeatable (added to the YAML's); "
    "values are integers, or countries (US, US-CA) for Locale.",
)
@click.option("--resume", is_flag=True, help="Publish the rows an interrupted run of batch NAME left.")
def publish(
    layout: Path,
    input_csv: Path,
    name: str | None,
    settings_file: Path | None,
    qualifications: tuple[str, ...],
    resume: bool,
    **flags: Any,
) -> None:
    """Create one HITType and one HTMLQuestion HIT per row of INPUT_CSV from LAYOUT.

    Each ``${column}`` of the layout is replaced by the row's value, HTML-escaped.
    ``Gold.<field>`` columns mark gold rows with the answer expected in form
    field <field>; they never reach the page (see docs/migrating.md).
    """
    from hits.db import session_scope
    from hits.requester.batches.plan import create_batch, load_settings_file
    from hits.requester.batches.publish import publish_batch
    from hits.requester.fileerrors import InputFileError, InputFileErrors
    from hits.requester.mturk import Marketplace, MarketplaceError

    name = name or input_csv.stem
    settings = load_settings()
    sessions = _sessions()
    if resume:
        batch_id = _batch_id(sessions, name)
    else:
        try:
            chosen = load_settings_file(settings_file, flags)
            if qualifications:
                extra = [parse_requirement(q) for q in qualifications]
                chosen = chosen.model_copy(
                    update={"qualification_requirements": [*chosen.qualification_requirements, *extra]}
                )
            with session_scope(sessions) as session:
                batch_id = create_batch(session, name, layout, input_csv, chosen, settings_file).id
        except (InputFileError, InputFileErrors, ValueError) as exc:
            _fail(exc)
        warn_unserved(layout)  # CDN scripts/stylesheets hitforge cannot serve: the requester should know
    market = Marketplace.from_settings(settings)
    try:
        report = publish_batch(sessions, market, batch_id)
    except MarketplaceError as exc:
        _fail(f"{exc} (HITs made so far are recorded: run again with --resume --name {name})")
    click.echo(f"batch {name}: {report.published} HITs published, {report.already_there} already there")


@batch.command("results")
@click.argument("name")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Default: stdout.")
def results(name: str, out: Path | None) -> None:
    """Write MTurk's batch-results CSV for batch NAME (one row per handed-in assignment)."""
    from hits.requester.batches.results import result_rows, write_results
    from hits.requester.mturk import Marketplace, MarketplaceError

    sessions = _sessions()
    batch_id = _batch_id(sessions, name)
    try:
        header, rows = result_rows(sessions, Marketplace.from_settings(load_settings()), batch_id)
    except MarketplaceError as exc:
        _fail(exc)
    handle = out.open("w", newline="", encoding="utf-8") if out else sys.stdout
    try:
        count = write_results(header, rows, handle)
    finally:
        if out:
            handle.close()
    click.echo(f"{count} assignments written", err=True)


@batch.command("review")
@click.argument("name")
@click.argument("reviewed_csv", type=click.Path(dir_okay=False, path_type=Path))
def review(name: str, reviewed_csv: Path) -> None:
    """Apply the Approve / Reject marks of an edited results file of batch NAME.

    An ``x`` (anything) in Approve approves; text in Reject rejects with that
    text as the worker's feedback. Handing the same file in again changes nothing.
    """
    from sqlalchemy.exc import IntegrityError

    from hits.db import session_scope
    from hits.requester.batches.results import marked_work, queue_review, read_review
    from hits.requester.fileerrors import InputFileError, InputFileErrors
    from hits.requester.mturk import Marketplace
    from hits.requester.quality.outbox import apply_entries

    sessions = _sessions()
    batch_id = _batch_id(sessions, name)
    market = Marketplace.from_settings(load_settings())
    try:
        marks = read_review(reviewed_csv)
        handed_in = marked_work(sessions, market, batch_id, marks)
        try:
            with session_scope(sessions) as session:
                entry_ids = queue_review(session, batch_id, reviewed_csv, marks, handed_in)
        except IntegrityError:
            # Someone handed in a file marking the same assignments at the same moment:
            # their entries are now there, and this pass finds and reuses them (or refuses
            # the lines they decided the other way).
            with session_scope(sessions) as session:
                entry_ids = queue_review(session, batch_id, reviewed_csv, marks, handed_in)
    except (InputFileError, InputFileErrors) as exc:
        _fail(exc)
    applied = apply_entries(sessions, market, entry_ids)
    done = [o for o in applied.outcomes.values() if not o.startswith("skipped")]
    click.echo(
        f"{len(marks)} marks: {len(done)} applied now, {len(applied.outcomes) - len(done)} applied before, "
        f"{len(applied.failures)} failed"
    )
    for entry_id, error in sorted(applied.failures.items()):
        console.print(
            f"[red]failed:[/red] entry {entry_id}: {error} (run the command again)", highlight=False
        )
    if applied.failures:
        sys.exit(1)


@batch.command("layout")
@click.argument("layout", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--requester", "requester_id", required=True, help="The marketplace requester who owns it.")
@click.option("--name", help="Default: the file name.")
def layout_create(layout: Path, requester_id: str, name: str | None) -> None:
    """Store LAYOUT on this marketplace; print its HITLayoutId (for CreateHIT's HITLayoutId).

    Run by the marketplace's operator, as MTurk's layouts were made in its UI.
    """
    from hits.db import session_scope
    from hits.market.layouts import create_layout
    from hits.market.models import Requester
    from hits.requester.batches.inputs import decode_utf8
    from hits.requester.fileerrors import InputFileError
    from hits.wire.layout import layout_parameters

    try:
        html = decode_utf8(layout, layout.read_bytes())
    except OSError as exc:
        _fail(f"{layout}: cannot read file: {exc.strerror}")
    except InputFileError as exc:
        _fail(exc)
    sessions = open_sessions("market")
    with session_scope(sessions) as session:
        if session.get(Requester, requester_id) is None:
            _fail(f"no requester {requester_id}")
        try:
            created = create_layout(session, requester_id, name or layout.name, html)
        except ValueError as exc:
            _fail(f"{layout}: {exc}")
        layout_id, parameters = created.id, layout_parameters(html)
    warn_unserved(layout)
    click.echo(f"HITLayoutId: {layout_id}")
    click.echo(f"HITLayoutParameters: {', '.join(parameters.names) or '(none)'}")
    if parameters.optional:
        click.echo(
            f"Optional (used only inside <script>; left as written when not given): "
            f"{', '.join(parameters.optional)}"
        )


batch.add_command(check_page)  # ``hitforge batch check PAGE``: the CDN URLs a page loads, served or not
