"""Jinja setup: the app's templates plus each task template's own folder."""

from __future__ import annotations

from typing import Any

from flask import Flask, g
from jinja2 import ChoiceLoader, FileSystemLoader, PrefixLoader

from hits.requester.templates import available_templates


def init_app(app: Flask) -> None:
    task_loaders = {name: FileSystemLoader(str(t.directory)) for name, t in available_templates().items()}
    app.jinja_loader = ChoiceLoader(
        [FileSystemLoader(str(app.root_path + "/templates")), PrefixLoader(task_loaders)]
    )

    @app.context_processor
    def _nonce() -> dict[str, Any]:
        return {"csp_nonce": g.get("csp_nonce", "")}
