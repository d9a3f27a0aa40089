"""Saliency heatmaps for the ``heatmap`` template: where they come from and how they are drawn.

A heatmap is a 2-D array of non-negative numbers over an image, saying how
strongly a model ties each region to a text. For a report sentence it may be
precomputed (a ``.npy`` array or a greyscale picture in the campaign's media
folder, :mod:`hits.requester.heatmaps.arrays`); for any text, including a worker's own
prompt, it comes from the model's provider (:mod:`hits.requester.heatmaps.providers`):
the deterministic built-in one, one a package registers under the
``hitforge.heatmap_providers`` entry-point group, or a model served over
HTTP elsewhere. Providers are called with a time limit; a failure is
recorded (:mod:`hits.requester.heatmaps.log`) and shown to the worker as such.
"""

from __future__ import annotations


class HeatmapError(Exception):
    """A heatmap that could not be had: the message is for the requester, never for the worker."""


__all__ = ["HeatmapError"]
