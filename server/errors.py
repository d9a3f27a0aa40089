"""Input no view can store, refused at the door with a clear 400 instead of failing deep down as a 500.

A NUL character is legal in a URL (``%00``) and in a form, but no PostgreSQL text
column holds one: a view that looks a row up by such a value fails in the driver
(SQLite lets it through, so only one backend shows it). No page has a use for it,
so every web request carrying one is refused before any view runs. The MTurk API
is left out: it answers in botocore's JSON error format and checks its own input.

A ``DataError`` from the database is deliberately *not* turned into a 400 here:
after this check, one means our code built a value the schema refuses, a bug that
must stay a visible 500 (Flask's page, which never shows a traceback outside debug).
"""

from __future__ import annotations

from collections.abc import Iterable

from flask import Flask, abort, request

#: Blueprints that validate their own input and answer errors in their own format.
SELF_CHECKED = {"mturk_api"}


def _has_nul(texts: Iterable[str]) -> bool:
    return any("\x00" in text for text in texts)


def refuse_nul_input() -> None:
    """Answer 400 to a page request whose path, query string, form or file names hold a NUL."""
    if request.blueprint in SELF_CHECKED:
        return
    path_values = [v for v in (request.view_args or {}).values() if isinstance(v, str)]
    fields = list(request.args.items(multi=True))
    if request.method in ("POST", "PUT", "PATCH"):
        fields += request.form.items(multi=True)
        fields += [(name, f.filename or "") for name, f in request.files.items(multi=True)]
    if _has_nul(path_values) or _has_nul(k for k, _ in fields) or _has_nul(v for _, v in fields):
        abort(
            400, description="The request holds a NUL character (%00), which no field of this site accepts."
        )


def init_app(app: Flask) -> None:
    """Refuse NUL characters in every page request (see the module's docstring for why here)."""
    app.before_request(refuse_nul_input)
