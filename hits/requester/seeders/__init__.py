"""Seeders: where the first text of a picture comes from before any person has seen it.

A seeder is given one picture and answers :class:`Seeds`: objects (a label
and a box ``[x, y, w, h]`` in image pixels, with a caption for the object's
crop) and a caption of the whole picture. The workflow asks for seeds from a
Celery task or the CLI, never from a web request: a model may take seconds,
so every call has a time limit and is retried (:func:`call_seeder`).

Built in:

* ``builtin``: a trivial one for demos and tests; the picture's ``alt`` text
  (or "A picture.") as the caption, no objects.
* ``file``: seeds computed elsewhere, one JSON line per item id
  (:class:`FileSeeder`).
* ``http``: a model behind a web address, which gets the picture (its bytes,
  base64-encoded, or its web address) as a JSON POST (:func:`request_body`)
  and answers seeds as JSON; only public addresses, by the same
  rules (and the same checked connection) as notification destinations
  (``hits.wire.destinations``), unless the workflow allows private ones.

Other seeders come from installed packages, through the ``hitforge.seeders``
entry-point group: the entry point names a callable taking the options
mapping and returning an object with a ``seed(picture) -> Seeds`` method.
"""

from __future__ import annotations

import base64
import json
import mimetypes
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hits.wire.destinations import DestinationRefused, check_destination, checked_session

#: The entry-point group third-party seeders register under.
ENTRY_POINT_GROUP = "hitforge.seeders"


class SeederError(Exception):
    """A seeder that cannot be configured, or a call that failed every try."""


@dataclass(frozen=True)
class ObjectSeed:
    """One detected object: what it is, where (image pixels), and a caption of its crop."""

    label: str
    box: tuple[float, float, float, float]
    caption: str = ""


@dataclass(frozen=True)
class Seeds:
    """What a seeder says of one picture."""

    caption: str
    objects: list[ObjectSeed] = field(default_factory=list)


@dataclass(frozen=True)
class Picture:
    """The picture a seeder is asked about: the item's id, its image reference and local file if any."""

    item_id: str
    image: str
    path: Path | None = None
    alt: str = ""


class Seeder(Protocol):
    """Anything with this method can seed."""

    def seed(self, picture: Picture) -> Seeds:  # pragma: no cover - a protocol
        ...


class _ObjectModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = Field(min_length=1, max_length=200)
    box: tuple[float, float, float, float]
    caption: str = Field("", max_length=2000)


class SeedsModel(BaseModel):
    """The JSON shape of seeds, in a seeds file and in an HTTP seeder's answer."""

    model_config = ConfigDict(extra="forbid")
    caption: str = Field("", max_length=5000)
    objects: list[_ObjectModel] = Field(default_factory=list, max_length=200)

    def to_seeds(self) -> Seeds:
        return Seeds(
            caption=" ".join(self.caption.split()),
            objects=[ObjectSeed(o.label, o.box, " ".join(o.caption.split())) for o in self.objects],
        )


class BuiltinSeeder:
    """The trivial seeder: the picture's alt text as its caption, no objects."""

    def seed(self, picture: Picture) -> Seeds:
        return Seeds(caption=" ".join(picture.alt.split()) or "A picture.")


class FileSeeder:
    """Seeds read from a JSONL file: ``{"id": item id, "caption": ..., "objects": [...]}`` per line."""

    def __init__(self, path: Path):
        self.path = path
        self._seeds: dict[str, Seeds] | None = None

    def _load(self) -> dict[str, Seeds]:
        if self._seeds is None:
            seeds: dict[str, Seeds] = {}
            try:
                lines = self.path.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                raise SeederError(f"cannot read seeds file {self.path}: {exc}") from exc
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                    item_id = str(row.pop("id"))
                    seeds[item_id] = SeedsModel.model_validate(row).to_seeds()
                except (ValueError, KeyError, TypeError, AttributeError, ValidationError) as exc:
                    raise SeederError(f"{self.path}, line {number}: not a seeds line ({exc})") from exc
            self._seeds = seeds
        return self._seeds

    def seed(self, picture: Picture) -> Seeds:
        found = self._load().get(picture.item_id)
        if found is None:
            raise SeederError(f"{self.path} has no seeds for item {picture.item_id!r}")
        return found


#: The largest picture an HTTP seeder is sent (its bytes, base64-encoded, in the JSON body).
MAX_IMAGE_BYTES = 20_000_000


def request_body(picture: Picture) -> dict[str, Any]:
    """What an HTTP seeder is sent about ``picture`` (the shape docs/templates.md documents).

    ``id``, ``image`` (the items file's reference), ``alt``, and the picture
    itself: ``image_base64`` with its ``media_type`` when it is a file of the
    campaign's media folder, or ``image_url`` when the items file gives a web
    address (which the model fetches; the file is never on this machine).
    """
    body: dict[str, Any] = {"id": picture.item_id, "image": picture.image, "alt": picture.alt}
    if picture.path is not None:
        try:
            size = picture.path.stat().st_size
            if size > MAX_IMAGE_BYTES:
                raise SeederError(f"the picture {picture.image!r} is {size} bytes, over {MAX_IMAGE_BYTES}")
            data = picture.path.read_bytes()
        except OSError as exc:
            raise SeederError(f"cannot read the picture {picture.image!r}: {exc.strerror or exc}") from exc
        body["media_type"] = mimetypes.guess_type(picture.path.name)[0] or "application/octet-stream"
        body["image_base64"] = base64.b64encode(data).decode("ascii")
    elif picture.image.startswith(("http://", "https://")):
        body["image_url"] = picture.image
    return body


class HttpSeeder:
    """A model behind a web address: POST :func:`request_body` as JSON, answer :class:`SeedsModel` JSON."""

    def __init__(self, url: str, *, allow_private: bool = False, timeout: float = 30.0):
        try:
            check_destination(url, allow_private)
        except DestinationRefused as exc:
            raise SeederError(f"the seeder address {url!r} cannot be used: {exc}") from exc
        self.url, self.allow_private, self.timeout = url.strip(), allow_private, timeout

    def seed(self, picture: Picture) -> Seeds:
        # Checked again on every call, and the connection connects only to addresses it checked
        # (a name that later resolves to a private address is refused: DNS rebinding).
        check_destination(self.url, self.allow_private)
        body = request_body(picture)
        with checked_session(self.allow_private) as http:
            response = http.post(
                self.url,
                json=body,
                timeout=self.timeout,
                allow_redirects=False,
            )
        if response.status_code != 200:
            raise SeederError(f"the seeder answered HTTP {response.status_code}")
        if len(response.content) > 1_000_000:
            raise SeederError("the seeder's answer is over 1 MB")
        try:
            return SeedsModel.model_validate_json(response.content).to_seeds()
        except ValidationError as exc:
            raise SeederError(f"the seeder's answer is not seeds: {exc.error_count()} problem(s)") from exc


class SeederOptions(BaseModel):
    """The ``seeder:`` block of a workflow: which seeder, with its options and call limits."""

    model_config = ConfigDict(extra="forbid")
    kind: str = Field(
        "builtin",
        min_length=1,
        max_length=100,
        description="builtin, file (seeds from a file), http (a model's address) or an entry point's name.",
    )
    path: str | None = Field(None, description="file: the seeds file, relative to the campaign file.")
    url: str | None = Field(None, description="http: the model's address.")
    allow_private: bool = Field(
        False, description="http: allow an address on a private network (refused by default)."
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="Options passed to an entry-point seeder."
    )
    timeout_seconds: float = Field(
        30.0, gt=0, le=600, description="How long one call to the seeder may take."
    )
    attempts: int = Field(3, ge=1, le=10, description="Calls made for one picture before the seeding fails.")


def make_seeder(options: SeederOptions, base_dir: Path) -> Seeder:
    """The seeder ``options`` describe; :class:`SeederError` names what is wrong."""
    if options.kind == "builtin":
        return BuiltinSeeder()
    if options.kind == "file":
        if not options.path:
            raise SeederError("the file seeder needs path: the seeds file")
        return FileSeeder((base_dir / options.path).resolve())
    if options.kind == "http":
        if not options.url:
            raise SeederError("the http seeder needs url: the model's address")
        return HttpSeeder(options.url, allow_private=options.allow_private, timeout=options.timeout_seconds)
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == options.kind]
    if not found:
        known = sorted(
            {"builtin", "file", "http", *(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))}
        )
        raise SeederError(f"unknown seeder {options.kind!r}; choose one of: {', '.join(known)}")
    factory: Callable[[Mapping[str, Any]], Seeder] = found[0].load()
    return factory(options.options)


def call_seeder(
    seeder: Seeder,
    picture: Picture,
    *,
    timeout: float,
    attempts: int,
    sleep: Callable[[float], None] = time.sleep,
) -> Seeds:
    """``seeder.seed(picture)`` within ``timeout`` seconds a try, ``attempts`` tries, backing off.

    A call that overruns is abandoned (its thread is left to finish on its
    own; nothing it returns later is used). The last error is raised as a
    :class:`SeederError`.
    """
    if _in_web_request():
        raise SeederError("seeders are called from a Celery task or the CLI, never inside a web request")
    last: BaseException | None = None
    for attempt in range(attempts):
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="seeder")
        try:
            result = pool.submit(seeder.seed, picture).result(timeout=timeout)
            if not isinstance(result, Seeds):
                raise SeederError(f"the seeder returned {type(result).__name__}, not Seeds")
            return result
        except FutureTimeout:
            last = SeederError(f"the seeder took longer than {timeout:g} s")
        except Exception as exc:  # noqa: BLE001 - a plug-in may raise anything; it is retried
            last = exc
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        if attempt + 1 < attempts:
            sleep(min(30.0, 0.5 * 2**attempt))
    raise SeederError(f"seeding {picture.item_id!r} failed after {attempts} tries: {last}") from last


def _in_web_request() -> bool:
    """Whether this thread is serving a Flask request (looked up, not imported: no Flask in the domain)."""
    flask = sys.modules.get("flask")
    return bool(flask is not None and flask.has_request_context())


def seed_text(seeds: Seeds, upstream: list[dict[str, Any]] | None = None) -> str:
    """The text round 1 starts from: the caption, then each object's description.

    ``upstream``: Task 1's triples for the picture (``{label, box, description}``),
    which replace the seeder's objects when a person has annotated them.
    """
    parts = [seeds.caption] if seeds.caption else []
    if upstream:
        parts += [str(o.get("description") or "").strip() for o in upstream]
    else:
        parts += [o.caption for o in seeds.objects]
    sentences = []
    for part in parts:
        part = " ".join(part.split())
        if part:
            part = part[0].upper() + part[1:]
            sentences.append(part if part[-1] in ".!?" else part + ".")
    return " ".join(sentences)
