"""``hitforge results``: export a campaign's results and aggregate its labels."""

from __future__ import annotations

import csv
import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from hits.requester.quality import METHODS  # a plain tuple: its package imports nothing heavy
from server.cli.sessions import open_sessions

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

# The domain and SQLAlchemy are imported in the functions: ``hitforge results --help`` needs neither.


def _campaign_id(session, name: str, template: str | None = None) -> int:  # type: ignore[no-untyped-def]
    """The id of campaign ``name``; with ``template``, refused unless the campaign uses it."""
    from sqlalchemy import select

    from hits.requester.tables.campaigns import BATCH_STATUS, Campaign

    campaign = session.scalar(select(Campaign).where(Campaign.name == name))
    if campaign is None:
        raise click.ClickException(f"no campaign named {name!r}")
    if campaign.status == BATCH_STATUS:
        # A layout batch has no template to aggregate with; its results are MTurk's CSV.
        raise click.ClickException(f"{name!r} is a layout batch: use `hitforge batch results`")
    if template is not None and campaign.template != template:
        raise click.ClickException(f"campaign {name!r} uses the {campaign.template} template, not {template}")
    return int(campaign.id)


def _requester_session() -> AbstractContextManager[Session]:
    """A unit of work on the requester database the environment names."""
    from hits.db import session_scope

    return session_scope(open_sessions())


@click.group()
def results() -> None:
    """Campaign results: exports and aggregation."""


@results.command("export")
@click.argument("campaign")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), default="csv", show_default=True)
@click.option(
    "--out", type=click.Path(dir_okay=False, path_type=Path), help="File to write (default: stdout)."
)
def export(campaign: str, fmt: str, out: Path | None) -> None:
    """CSV in MTurk's batch-results layout, or JSONL with one assignment per line."""
    from hits.requester.campaigns.export import write_batch_csv, write_jsonl

    with _requester_session() as session:
        campaign_id = _campaign_id(session, campaign)
        handle = out.open("w", newline="", encoding="utf-8") if out else sys.stdout
        try:
            count = (write_batch_csv if fmt == "csv" else write_jsonl)(session, campaign_id, handle)
        finally:
            if out:
                handle.close()
    click.echo(f"{count} assignments exported", err=True)


@results.command("aggregate")
@click.argument("campaign")
@click.option("--method", type=click.Choice(METHODS), default=None, help="Default: the template's own.")
def aggregate(campaign: str, method: str | None) -> None:
    """One label per item with its confidence and votes, and Krippendorff's alpha.

    The confidence accounts for the number of votes (two agreeing votes: 0.875);
    ``support`` is the method's own figure, which does not.

    CSV on stdout; a label that is a list or a mapping (a compare template's
    ordering, best first) is one JSON cell.
    """
    from hits.requester.campaigns.export import csv_cell
    from hits.requester.quality.aggregation import aggregate_campaign, campaign_agreement

    with _requester_session() as session:
        campaign_id = _campaign_id(session, campaign)
        rows = aggregate_campaign(session, campaign_id, method)
        alpha = campaign_agreement(session, campaign_id)
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(["item_id", "label", "confidence", "votes", "method", "support"])
    for row in rows:
        support = row.detail.get("support")
        writer.writerow(
            [
                row.item_id,
                csv_cell(row.label),
                f"{row.confidence:.4f}",
                row.votes,
                row.method,
                "" if support is None else f"{support:.4f}",
            ]
        )
    click.echo(
        "confidence: P(most workers like these would give the label), from the item's votes "
        "(Beta posterior); support: the method's own share or posterior, which ignores how many votes",
        err=True,
    )
    click.echo(f"krippendorff_alpha={'n/a' if alpha is None else f'{alpha:.4f}'}", err=True)


@results.command("systems")
@click.argument("campaign")
def systems(campaign: str) -> None:
    """Side-by-side results of a compare campaign: which system wins, and by how much.

    One CSV table of systems (Bradley-Terry strength, wins, comparisons, win
    rate), then one of head-to-head pairs (each side's wins, the net
    preference and the Bradley-Terry probability that the first is better).
    """
    from hits.requester.quality.ranking import campaign_systems

    with _requester_session() as session:
        report = campaign_systems(session, _campaign_id(session, campaign))
    if not report.systems:
        raise click.ClickException("no judgements between candidates of different systems")
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(["system", "strength", "wins", "comparisons", "win_rate"])
    for s in report.systems:
        writer.writerow([s.system, f"{s.strength:.4f}", s.wins, s.comparisons, f"{s.win_rate:.4f}"])
    writer.writerow([])
    writer.writerow(["first", "second", "first_wins", "second_wins", "net_preference", "p_first_better"])
    for h in report.pairs:
        writer.writerow(
            [
                h.first,
                h.second,
                h.first_wins,
                h.second_wins,
                f"{h.net_preference:+.4f}",
                f"{h.p_first_better:.4f}",
            ]
        )


@results.command("sxs")
@click.argument("campaign")
@click.option(
    "--right", default=None, help="System to put on the right (Y) in its pairs (default: alphabetical)."
)
@click.option("--format", "fmt", type=click.Choice(["table", "csv"]), default="table", show_default=True)
@click.option("--confidence", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True)
def sxs(campaign: str, right: str | None, fmt: str, confidence: float) -> None:
    """A blinded side-by-side (sxs) campaign's table, per system pair and metric.

    The shares of judgements saying the left system (X) is substantially or
    marginally better, neutral, the right system (Y) marginally or
    substantially better, each with a Wilson interval, and the net
    preference for Y (% Y better - % X better) with a bootstrap interval over
    items. Gold items and work that does not count are left out.
    """
    from hits.requester.templates.sxs.report import (
        COLUMNS,
        campaign_judgements,
        format_table,
        preference_tables,
    )

    with _requester_session() as session:
        campaign_id = _campaign_id(session, campaign, "sxs")
        tables = preference_tables(campaign_judgements(session, campaign_id), right, confidence)
    if not tables:
        raise click.ClickException("no judgements between candidates of different systems yet")
    if fmt == "table":
        click.echo("\n\n".join(format_table(t, confidence) for t in tables))
        return
    writer = csv.writer(sys.stdout, lineterminator="\n")
    names = {-2: "x_substantially", -1: "x_marginally", 0: "neutral", 1: "y_marginally", 2: "y_substantially"}
    header = ["x", "y", "metric", "judgements"]
    for c in COLUMNS:
        header += [names[c], f"{names[c]}_low", f"{names[c]}_high"]
    writer.writerow([*header, "net_y", "net_y_low", "net_y_high"])
    for t in tables:
        for row in t.rows:
            cells: list[object] = [t.left, t.right, row.metric, row.judgements]
            for s in row.shares:
                cells += [f"{s.share:.4f}", f"{s.low:.4f}", f"{s.high:.4f}"]
            writer.writerow([*cells, f"{row.net:+.4f}", f"{row.net_low:+.4f}", f"{row.net_high:+.4f}"])


@results.command("rank")
@click.argument("campaign")
@click.option("--format", "fmt", type=click.Choice(["table", "csv"]), default="table", show_default=True)
@click.option("--confidence", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True)
def rank(campaign: str, fmt: str, confidence: float) -> None:
    """A ranking-with-ties (rank) campaign's table: per system and condition, mean rank and first places.

    Each with a bootstrap interval over items, and the systems' strengths in
    Bradley-Terry with ties (Davidson). Gold and work that does not count are
    left out.
    """
    from hits.requester.templates.rank.report import campaign_rankings, format_table, rank_table

    with _requester_session() as session:
        campaign_id = _campaign_id(session, campaign, "rank")
        table = rank_table(campaign_rankings(session, campaign_id), confidence)
    if table is None:
        raise click.ClickException("no rankings yet")
    if fmt == "table":
        click.echo(format_table(table, confidence))
        return
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(
        ["system", "condition", "items", "rankings", "mean_rank", "mean_rank_low", "mean_rank_high"]
        + ["first_share", "first_low", "first_high", "strength", "nu"]
    )
    for system in table.systems:
        for column in table.columns:
            c = column.cells.get(system)
            if c is None:
                continue
            writer.writerow(
                [system, column.condition, column.items, c.rankings]
                + [f"{v:.4f}" for v in (c.mean_rank, c.mean_rank_low, c.mean_rank_high)]
                + [f"{v:.4f}" for v in (c.first_share, c.first_low, c.first_high, c.strength, column.nu)]
            )


@results.command("heatmap")
@click.argument("campaign")
@click.option("--format", "fmt", type=click.Choice(["table", "csv"]), default="table", show_default=True)
def heatmap(campaign: str, fmt: str) -> None:
    """A heatmap campaign's table: per round, model and question, the answers' shares, mean and agreement.

    Also each model's heatmap requests (made, failed, timed out) and the answers left out
    because they do not match what the page showed.
    """
    from hits.requester.templates.heatmap.report import (
        CSV_HEADER,
        campaign_study,
        csv_rows,
        format_tables,
        round_tables,
    )

    with _requester_session() as session:
        campaign_id = _campaign_id(session, campaign, "heatmap")
        study = campaign_study(session, campaign_id)
    tables = round_tables(study.judgements)
    if not tables and not study.requests:
        raise click.ClickException("no heatmap judgements yet")
    if fmt == "table":
        click.echo(format_tables(tables, study))
        return
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    writer.writerows(csv_rows(tables))
