"""Heatmap providers: what turns an image and a text into a heatmap, called with a time limit.

A campaign names its models in ``template_options.models``; each model's
:class:`ModelSpec` says which provider makes its heatmaps for texts that have
none precomputed (every custom prompt):

* ``builtin``: :class:`hits.requester.heatmaps.builtin.BlobProvider`, deterministic, for demos and tests;
* ``entry_point``: an object from an installed package, registered under the
  ``hitforge.heatmap_providers`` entry-point group; the entry point is called
  with the spec's ``options`` and returns something with a
  ``heatmap(image: ImageSource, text: str)`` method giving a 2-D array;
* ``http``: a model served elsewhere (:mod:`hits.requester.heatmaps.remote`);
* ``none``: no live heatmaps (precomputed ones only).

:func:`compute_all` runs several providers at once and waits at most the
time limit for them: a provider that is slower is reported as timed out and
the caller goes on (its thread finishes, or not, on its own). Each provider
has a lane of its own (:mod:`hits.requester.heatmaps.lanes`) that bounds its calls in
flight and stops calling it for a while after repeated timeouts, so a hung
provider holds a few threads of its own and never those of the others.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, wait
from dataclasses import dataclass
from functools import lru_cache, partial
from importlib.metadata import entry_points
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from hits.requester.heatmaps import HeatmapError
from hits.requester.heatmaps.arrays import checked
from hits.requester.heatmaps.builtin import BlobProvider
from hits.requester.heatmaps.lanes import BREAKER_TIMEOUTS, Lane, lane_named, start_call
from hits.requester.heatmaps.remote import HttpProvider
from hits.requester.heatmaps.source import HeatmapProvider, ImageSource
from hits.shared_breakers import Breakers

ENTRY_POINT_GROUP = "hitforge.heatmap_providers"
__all__ = [
    "BREAKER_TIMEOUTS",
    "ENTRY_POINT_GROUP",
    "Job",
    "ModelSpec",
    "HeatmapProvider",
    "ImageSource",
    "Outcome",
    "compute_all",
    "provider_for",
]


class ModelSpec(BaseModel):
    """One model of a campaign: the provider of its live heatmaps and that provider's settings."""

    model_config = ConfigDict(extra="forbid")
    provider: Literal["builtin", "entry_point", "http", "none"] = "none"
    #: builtin: the blob's width (a fraction of the image), how it is placed, stray blobs.
    spread: float = Field(0.1, gt=0.005, le=1.0)
    aim: Literal["words", "hash"] = "words"
    decoys: int = Field(0, ge=0, le=5)
    #: entry_point: the entry point's name in the ``hitforge.heatmap_providers`` group, and its options.
    entry_point: str | None = Field(None, min_length=1, max_length=200)
    options: dict[str, Any] = Field(default_factory=dict)
    #: http: where the model is served.
    url: str | None = Field(None, min_length=8, max_length=2000)

    def lane(self) -> str:
        """The name of the lane this model's calls run in: the same provider (and settings), the same lane."""
        if self.provider == "http":
            return f"http provider {self.url}"
        if self.provider == "entry_point":
            return f"entry point {self.entry_point} {json.dumps(self.options, sort_keys=True)}"
        return f"{self.provider} provider"

    @model_validator(mode="after")
    def _complete(self) -> ModelSpec:
        if self.provider == "http" and not (self.url or "").lower().startswith(("http://", "https://")):
            raise ValueError("an http provider needs a url starting with http:// or https://")
        if self.provider == "entry_point":
            if not self.entry_point:
                raise ValueError(f"an entry_point provider needs entry_point: a name in {ENTRY_POINT_GROUP}")
            if not entry_points(group=ENTRY_POINT_GROUP, name=self.entry_point):
                raise ValueError(
                    f"no installed package registers {self.entry_point!r} in {ENTRY_POINT_GROUP}"
                )
        return self


def provider_for(
    name: str, spec: ModelSpec, *, allow_private: bool = False, timeout: float | None = None
) -> HeatmapProvider | None:
    """The provider of model ``name``'s live heatmaps; None for ``provider: none``.

    ``allow_private``: whether an http provider may be on a private or
    loopback address (the operator's choice, never the campaign's).
    ``timeout``: an http provider's socket timeout (default 30 s); a little
    over the campaign's time limit, so a thread waiting on a slow model is
    freed soon after the worker has been answered.
    """
    if spec.provider == "builtin":
        return BlobProvider(name=name, spread=spec.spread, aim=spec.aim, decoys=spec.decoys)
    if spec.provider == "http":
        assert spec.url is not None  # checked by the spec
        if timeout is None:
            return HttpProvider(spec.url, allow_private=allow_private)
        return HttpProvider(spec.url, allow_private=allow_private, timeout=timeout)
    if spec.provider == "entry_point":
        return _entry_point_provider(spec.entry_point or "", json.dumps(spec.options, sort_keys=True))
    return None


@lru_cache(maxsize=32)
def _entry_point_provider(name: str, options: str) -> HeatmapProvider:
    """The provider an entry point makes with ``options`` (JSON), made once per process.

    A provider usually loads a model, which takes far longer than one heatmap:
    it is kept for the next requests (a failure is not kept, so it is tried again).
    """
    found = entry_points(group=ENTRY_POINT_GROUP, name=name)
    if not found:
        raise HeatmapError(f"no installed package registers {name!r} in {ENTRY_POINT_GROUP}")
    made = next(iter(found)).load()(**json.loads(options))
    if not callable(getattr(made, "heatmap", None)):
        raise HeatmapError(f"entry point {name!r} gave an object without a heatmap() method")
    return made  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Job:
    """A call of a live provider, run in the provider's lane (``ModelSpec.lane``)."""

    lane: str
    call: Callable[[], Any]


@dataclass(frozen=True)
class Outcome:
    """What one provider call came to: ``ok`` with a checked heat array, or why not."""

    status: Literal["ok", "failed", "timeout", "unavailable"]
    heat: np.ndarray | None = None
    detail: str = ""
    seconds: float = 0.0


def _timed(job: Callable[[], Any]) -> Outcome:
    started = time.monotonic()
    try:
        heat = checked(job())
    except HeatmapError as exc:
        return Outcome("failed", detail=str(exc), seconds=time.monotonic() - started)
    except Exception as exc:  # a provider is someone else's code: any failure is the model's
        return Outcome("failed", detail=f"{type(exc).__name__}: {exc}", seconds=time.monotonic() - started)
    return Outcome("ok", heat=heat, seconds=time.monotonic() - started)


def compute_all(
    jobs: Mapping[str, Job | Callable[[], Any] | None], limit: float, breakers: Breakers | None = None
) -> dict[str, Outcome]:
    """Run every job at once; each gives a heatmap, or fails, or is cut off after ``limit`` seconds.

    A job that is None has no provider: ``unavailable``; so is a :class:`Job`
    whose provider is not called now (:mod:`hits.requester.heatmaps.lanes`: too many of
    its calls still running, or it timed out too often lately). The call
    returns within ``limit`` seconds (plus a little bookkeeping) whatever the
    jobs do. ``breakers``: where the providers' breakers live (the deployment's, shared by every
    process); by default each process's own.
    """
    out: dict[str, Outcome] = {
        k: Outcome("unavailable", detail="no live provider") for k, j in jobs.items() if j is None
    }
    started = time.monotonic()
    running: dict[str, tuple[Lane | None, Future[Outcome]]] = {}
    for key, job in jobs.items():
        if job is None:
            continue
        lane = lane_named(job.lane, breakers) if isinstance(job, Job) else None
        refusal = lane.admit() if lane is not None else None
        if refusal is not None:
            out[key] = Outcome("unavailable", detail=refusal)
            continue
        call = job.call if isinstance(job, Job) else job
        running[key] = (lane, start_call(partial(_timed, call), lane))
    wait([future for _, future in running.values()], timeout=limit)
    for key, (lane, future) in running.items():
        if future.done():
            out[key] = future.result()
            if lane is not None:
                lane.answered(out[key].status == "ok")
        else:
            out[key] = Outcome(
                "timeout", detail=f"no heatmap within {limit:g} s", seconds=time.monotonic() - started
            )
            if lane is not None:
                lane.timed_out()
    return out
