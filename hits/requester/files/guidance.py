"""What a campaign tells its workers: instructions, examples, a FAQ and scale wording (``guidance:``).

One section of the campaign file, shared by every template. Its texts are
Markdown (CommonMark), rendered on the server with raw HTML disabled: a
``<script>`` a requester types is shown as text, never run. Links may only go
to ``http``, ``https`` or ``mailto`` addresses (a ``javascript:`` or ``data:``
link is refused when the file is checked, and rendered without its address if
a stored spec holds one anyway); pictures may only be files of the campaign's
media folder, served like its other pictures.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from markdown_it import MarkdownIt
from markdown_it.token import Token
from pydantic import BaseModel, ConfigDict, Field, model_validator
from werkzeug.security import safe_join

from hits.requester.fileerrors import InputFileError, InputFileErrors
from hits.requester.templates.base import ScaleWording

#: The longest Markdown text of one field: guidance is read on every page, not a manual.
MAX_MARKDOWN = 20_000
#: Link schemes a worker may follow from a HIT page.
LINK_SCHEMES = ("http", "https", "mailto")
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
#: What browsers ignore at the start of a URL (so " javascript:" is still javascript:).
_URL_NOISE = re.compile(r"[\x00-\x20\x7f]+")


class GuidanceExample(BaseModel):
    """One worked example: a good or a bad answer, with its reasons (Markdown) and an optional picture."""

    model_config = ConfigDict(extra="forbid")
    kind: Literal["good", "bad"] = Field(
        description='"good" for an answer to follow, "bad" for one to avoid; the page says which in words.'
    )
    text: str = Field(
        min_length=1, max_length=MAX_MARKDOWN, description="What the example shows and why (Markdown)."
    )
    image: str | None = Field(
        None,
        min_length=1,
        max_length=500,
        description="A picture of the example: a file in the campaign's media folder (media_dir).",
    )
    image_alt: str = Field(
        "", max_length=300, description="A short text alternative for the picture, read by screen readers."
    )
    answer: str | None = Field(
        None, min_length=1, max_length=300, description="The answer given in this example, in a few words."
    )

    @model_validator(mode="after")
    def _picture_has_words(self) -> GuidanceExample:
        # An example's picture carries its point: a screen reader's user needs it in words too.
        if self.image is not None and not self.image_alt.strip():
            raise ValueError("an example with an image needs image_alt, the picture in a few words")
        return self


class GuidanceQuestion(BaseModel):
    """One entry of the workers' FAQ."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=1000, description="The question (Markdown, one line).")
    answer: str = Field(min_length=1, max_length=MAX_MARKDOWN, description="Its answer (Markdown).")


class Guidance(BaseModel):
    """What workers read on every HIT page of the campaign, shared by every template."""

    model_config = ConfigDict(extra="forbid")
    instructions: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_MARKDOWN,
        description="The task's instructions (Markdown); they replace the template's own text on the page. "
        "Their headings sit under the page's title: # shows as a second-level heading, ## as a third.",
    )
    examples: list[GuidanceExample] = Field(
        default_factory=list,
        max_length=30,
        description="Good and bad examples, shown under the instructions.",
    )
    faq: list[GuidanceQuestion] = Field(
        default_factory=list, max_length=50, description="Questions workers ask, each with its answer."
    )
    scale: ScaleWording | None = Field(
        None,
        description="The words of the template's answer scale, in the order the page lists them: rating, "
        "4 labels from 4 down to 1; sxs, 5 labels from 'left is substantially better' to 'right is "
        "substantially better'; heatmap, a mapping from a question (coverage, share, intuitive) to its 5 "
        "answers from 1 to 5. Templates without a scale take none.",
    )


@cache
def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False})
    # Every address reaches the token stream, so this module decides about each one (and a check can
    # name it); markdown-it's own filter would leave a refused link as plain text nobody is told about.
    parser.validateLink = lambda url: True  # type: ignore[method-assign]
    return parser


def _scheme(url: str) -> str | None:
    found = _SCHEME.match(_URL_NOISE.sub("", url))
    return found.group(1).lower() if found else None


def link_allowed(url: str) -> bool:
    """Whether a Markdown link may keep its address: an ``http``, ``https`` or ``mailto`` one."""
    return _scheme(url) in LINK_SCHEMES and not url.startswith("//")


def local_picture(src: str) -> str | None:
    """The media-folder file a Markdown picture names (None: an address, not a file of the folder)."""
    cleaned = _URL_NOISE.sub("", src)
    if not cleaned or _scheme(cleaned) or cleaned.startswith(("/", "\\")):
        return None
    return unquote(cleaned)


def _inline_tokens(tokens: Sequence[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from _inline_tokens(token.children)


def markdown_problems(text: str) -> Iterator[str]:
    """What in a Markdown text breaks the rules: links not http(s)/mailto, pictures from elsewhere."""
    for token in _inline_tokens(_parser().parse(text)):
        if token.type == "link_open" and not link_allowed(str(token.attrGet("href") or "")):
            yield f"the link to {token.attrGet('href')!r} is not allowed: links must be http, https or mailto"
        elif token.type == "image" and local_picture(str(token.attrGet("src") or "")) is None:
            yield (
                f"the picture {token.attrGet('src')!r} must be a file of the campaign's media folder "
                "(media_dir), named by its path there"
            )


def markdown_pictures(text: str) -> list[str]:
    """The media-folder files a Markdown text shows, in order."""
    found = []
    for token in _inline_tokens(_parser().parse(text)):
        if token.type == "image":
            picture = local_picture(str(token.attrGet("src") or ""))
            if picture is not None:
                found.append(picture)
    return found


def _made_safe(tokens: list[Token], picture_url: Callable[[str], str | None]) -> list[Token]:
    """The tokens with refused links made inert and pictures pointed at their served URLs."""
    for token in _inline_tokens(tokens):
        if token.type in ("heading_open", "heading_close"):
            # Under the page's own title (its one h1): a requester's "#" is a section of the page.
            token.tag = f"h{min(6, int(token.tag[1:]) + 1)}"
        elif token.type == "link_open":
            href = str(token.attrGet("href") or "")
            if link_allowed(href):
                # A HIT page sits in the marketplace's frame: a link opens beside it, not over the work.
                token.attrSet("target", "_blank")
                token.attrSet("rel", "noopener noreferrer")
            else:
                token.attrs.pop("href", None)
        elif token.type == "image":
            picture = local_picture(str(token.attrGet("src") or ""))
            url = picture_url(picture) if picture is not None else None
            if url:
                token.attrSet("src", url)
            else:  # shown as its words only: a picture from elsewhere could tell who opened the page
                token.type, token.tag, token.attrs = "text", "", {}
                token.content = "".join(c.content for c in token.children or [])
                token.children = None
    return tokens


def render_markdown(text: str, picture_url: Callable[[str], str | None], *, inline: bool = False) -> str:
    """``text`` as safe HTML; ``picture_url`` maps a media-folder file to its URL (None: leave it out)."""
    parser = _parser()
    tokens = parser.parseInline(text) if inline else parser.parse(text)
    return parser.renderer.render(_made_safe(tokens, picture_url), parser.options, {})


def guidance_of(spec: Mapping[str, Any]) -> Guidance | None:
    """The guidance of a stored campaign spec (None: the campaign gives none)."""
    raw = spec.get("guidance")
    return Guidance.model_validate(raw) if raw else None


def guidance_pictures(guidance: Guidance) -> list[str]:
    """Every media-folder picture the guidance shows, once each, in a fixed order (served by index)."""
    found: list[str] = []
    texts = [guidance.instructions or ""]
    for example in guidance.examples:
        if example.image:
            found.append(example.image)
        texts.append(example.text)
    texts.extend(entry.answer for entry in guidance.faq)
    for text in texts:
        found.extend(markdown_pictures(text))
    return list(dict.fromkeys(found))


def _markdown_fields(guidance: Guidance) -> Iterator[tuple[str, str]]:
    if guidance.instructions:
        yield "guidance.instructions", guidance.instructions
    for n, example in enumerate(guidance.examples):
        yield f"guidance.examples.{n}.text", example.text
    for n, entry in enumerate(guidance.faq):
        yield f"guidance.faq.{n}.question", entry.question
        yield f"guidance.faq.{n}.answer", entry.answer


def guidance_problems(guidance: Guidance, media: Path | None) -> Iterator[tuple[str, str]]:
    """(field, message) for each rule the guidance breaks given the campaign's media folder."""

    def missing(picture: str) -> str | None:
        if media is None:
            return f"the picture {picture!r} needs a media folder: set media_dir"
        path = safe_join(str(media), picture)
        if path is None or not Path(path).is_file():
            return f"no file {picture!r} in the media folder {media}"
        return None

    for n, example in enumerate(guidance.examples):
        if example.image is not None:
            where = f"guidance.examples.{n}.image"
            if local_picture(example.image) is None:
                yield where, "the picture must be a file of the campaign's media folder, not an address"
            elif (problem := missing(example.image)) is not None:
                yield where, problem
    for where, text in _markdown_fields(guidance):
        yield from ((where, problem) for problem in markdown_problems(text))
        for picture in markdown_pictures(text):
            if (problem := missing(picture)) is not None:
                yield where, problem


@dataclass(frozen=True)
class ExampleView:
    """One example as the page shows it (HTML already made safe)."""

    kind: str
    label: str
    text: str
    image_url: str | None
    image_alt: str
    answer: str | None


@dataclass(frozen=True)
class GuidanceView:
    """The guidance as the page's shared block shows it: HTML made safe, pictures as served URLs."""

    instructions: str | None
    examples: list[ExampleView] = field(default_factory=list)
    faq: list[tuple[str, str]] = field(default_factory=list)
    #: The first practice page's URL and how many practice items there are (``training:``); None: none.
    practice_url: str | None = None
    practice_count: int = 0

    @property
    def summary(self) -> str:
        """The words of the block's toggle: what it holds."""
        parts = ["Instructions"]
        if self.practice_url:
            parts.append("practice")
        if self.examples:
            parts.append("examples")
        if self.faq:
            parts.append("questions and answers")
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def guidance_view(guidance: Guidance, picture_url: Callable[[str], str | None]) -> GuidanceView:
    """What the page's guidance block shows; ``picture_url`` serves a media-folder file."""
    examples = [
        ExampleView(
            kind=e.kind,
            label="Good example" if e.kind == "good" else "Bad example",
            text=render_markdown(e.text, picture_url),
            image_url=picture_url(e.image) if e.image else None,
            image_alt=e.image_alt,
            answer=e.answer,
        )
        for e in guidance.examples
    ]
    return GuidanceView(
        instructions=render_markdown(guidance.instructions, picture_url) if guidance.instructions else None,
        examples=examples,
        faq=[
            (render_markdown(q.question, picture_url, inline=True), render_markdown(q.answer, picture_url))
            for q in guidance.faq
        ],
    )


def scale_problem(template: str, default: ScaleWording | None, wording: ScaleWording) -> str | None:
    """Why ``wording`` cannot replace a template's scale words ``default`` (None: it can)."""
    if default is None:
        return f"the {template!r} template has no answer scale to reword; remove guidance.scale"
    if isinstance(default, list):
        if not isinstance(wording, list):
            return f"the {template!r} template's scale takes a list of {len(default)} labels"
        if len(wording) != len(default):
            return (
                f"the {template!r} template's scale has {len(default)} points, so it takes {len(default)} "
                f"labels, not {len(wording)}"
            )
        return None
    if not isinstance(wording, dict):
        return f"the {template!r} template's scale takes a mapping of {', '.join(default)} to their labels"
    for part, labels in wording.items():
        if part not in default:
            return f"the {template!r} template's scale has no part {part!r}; choose from {', '.join(default)}"
        if len(labels) != len(default[part]):
            return (
                f"{part!r} has {len(default[part])} points, so it takes {len(default[part])} labels, "
                f"not {len(labels)}"
            )
    return None


def check_guidance_files(
    path: Path, guidance: Guidance, media: Path | None, lines: Mapping[tuple[Any, ...], int]
) -> None:
    """Refuse guidance whose pictures the media folder lacks or whose Markdown links where it may not.

    Every problem at once, each with the campaign file's line and the field (``guidance.examples.0.image``).
    """
    errors = []
    for where, message in guidance_problems(guidance, media):
        steps = tuple(int(step) if step.isdigit() else step for step in where.split("."))
        line = next((lines[steps[:n]] for n in range(len(steps), 0, -1) if steps[:n] in lines), None)
        errors.append(InputFileError(path, line, where, message))
    if errors:
        raise InputFileErrors(errors)
