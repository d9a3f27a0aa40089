"""``hitforge target``: per-system CSV files in and out of a target-identification campaign."""

from __future__ import annotations

from pathlib import Path

import click

from server.cli.sessions import open_sessions

# The domain and SQLAlchemy are imported in the commands: ``hitforge target --help`` needs neither.


@click.group()
def target() -> None:
    """Target-object identification (template 'target'): import and export per-system files."""


@target.command("import")
@click.argument("csv_files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Items file (JSONL) to write.",
)
@click.option(
    "--gold-out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write rows whose category is filled to this gold file (JSONL) instead of the items file.",
)
@click.option(
    "--media-dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Check that every image path exists in this folder (the campaign's media_dir).",
)
def import_files(
    csv_files: tuple[Path, ...], out: Path, gold_out: Path | None, media_dir: Path | None
) -> None:
    """Turn one CSV per system (the file name is the system) into a campaign items file."""
    from hits.requester.fileerrors import InputFileError, InputFileErrors
    from hits.requester.templates.target.files import import_system_csvs

    try:
        report = import_system_csvs(list(csv_files), out, gold_out=gold_out, media_dir=media_dir)
    except (InputFileError, InputFileErrors) as exc:
        raise click.ClickException(str(exc)) from exc
    gold = f", {report.gold} gold items to {gold_out}" if gold_out else ""
    click.echo(f"{report.items} items from {len(report.systems)} systems written to {out}{gold}")


@target.command("export")
@click.argument("campaign")
@click.option(
    "--out-dir", required=True, type=click.Path(file_okay=False, path_type=Path), help="Folder to write into."
)
@click.option("--method", type=click.Choice(["majority_vote", "dawid_skene", "glad"]), default=None)
@click.option(
    "--link-images", is_flag=True, help="Link the images from the HTML files instead of embedding them."
)
def export_files(campaign: str, out_dir: Path, method: str | None, link_images: bool) -> None:
    """Write <system>.csv (with the category column filled) and <system>.html for each system."""
    from sqlalchemy import select

    from hits.db import session_scope
    from hits.requester.quality.aggregation import aggregate_campaign
    from hits.requester.tables.campaigns import Campaign
    from hits.requester.templates.target.files import export_system_files
    from hits.settings import load_settings

    settings = load_settings()
    with session_scope(open_sessions("requester", settings)) as session:
        campaign_id = session.scalar(select(Campaign.id).where(Campaign.name == campaign))
        if campaign_id is None:
            raise click.ClickException(f"no campaign named {campaign!r}")
        try:
            labels = aggregate_campaign(session, int(campaign_id), method)
            written = export_system_files(
                session, int(campaign_id), out_dir, labels, embed_images=not link_images
            )
        except ValueError as exc:
            raise click.ClickException(str(exc)) from exc
    for done in written:
        click.echo(
            f"{done.system}: {done.labelled} of {done.rows} items labelled; "
            f"wrote {done.csv_path} and {done.html_path}"
        )
