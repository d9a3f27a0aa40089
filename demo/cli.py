"""``hitforge demo``: a whole campaign with a simulated crowd (registered through the
``hitforge.commands`` entry point, so the product's CLI never imports the demo)."""

from __future__ import annotations

import sys

import click
from rich.console import Console

console = Console()


@click.command()
@click.option("--keep-serving", is_flag=True, help="Leave the server up and print its URLs.")
@click.option(
    "--template",
    default="rating",
    show_default=True,
    help="Task template to demo: rating, select, write, spans, target, compare, sxs, objects, rank, "
    "heatmap or refine; iiw runs the ImageInWords workflow (object annotation, then descriptions "
    "refined round by round).",
)
@click.option("--port", default=0, type=int, help="Port for the server (default: a free one).")
@click.option("--hits", "hit_count", default=24, show_default=True, type=int)
@click.option(
    "--recruit",
    type=click.Choice(["prolific"]),
    default=None,
    help="Recruit the crowd on Prolific, played by a stand-in served in process: participants enter "
    "by the study's link, and the demo prints what Prolific was asked to do.",
)
def demo(keep_serving: bool, template: str, port: int, hit_count: int, recruit: str | None) -> None:
    """Run a whole campaign on the embedded default with a simulated crowd.

    Its databases and files go to demo/ in the var folder (HITFORGE_VAR_DIR,
    default ./var), replaced on each run. Ctrl-C or SIGTERM stops it, its
    Celery worker and its server with it.
    """
    from demo.run import run_demo
    from demo.tasks import get_demo_task

    try:
        if template != "iiw":  # the ImageInWords workflow (Task 1 then Task 2), demo/iiw.py
            get_demo_task(template)
    except KeyError as exc:
        console.print(f"[red]error:[/red] {exc.args[0]}; or iiw, the ImageInWords workflow", highlight=False)
        sys.exit(2)

    if recruit and template == "iiw":
        console.print("[red]error:[/red] --recruit runs one campaign, not the iiw workflow", highlight=False)
        sys.exit(2)
    code = run_demo(
        console, keep_serving=keep_serving, template=template, port=port, hit_count=hit_count, recruit=recruit
    )
    sys.exit(code)
