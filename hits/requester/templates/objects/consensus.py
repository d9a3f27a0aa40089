"""Consensus of several workers' object lists for one image (aggregation ``object_clusters``).

Kept simple on purpose, and deterministic for a given order of answers:

1. Workers are taken in the order they submitted. Each one's boxes are
   matched one to one to the clusters so far (Hungarian method on IoU, pairs
   at ``threshold`` or more only); a box left over starts a new cluster. A
   cluster never holds two boxes of one worker.
2. A cluster is kept when more than half the workers put a box in it (with
   one worker, that worker's list is the consensus).
3. A kept cluster's box is the coordinate-wise median of its boxes' edges
   (left, top, right, bottom); its label is the commonest one (compared
   normalised, spelt as first given; a tie goes to the earliest); its
   description is that of the box nearest the median among those carrying
   the label.

The support figure handed to the vote confidence is the workers' mean F1
against the consensus (boxes at ``threshold``, labels agreeing): the share of
the crowd that agrees with the result. Agreement across workers per item is
their mean pairwise F1 (``detail["pairwise_f1"]``, None with one worker);
Krippendorff's alpha does not apply because object lists have no fixed units.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from statistics import median
from typing import Any

from hits.requester.answers import AggregatedItem
from hits.requester.templates.objects.geometry import IOU_THRESHOLD, iou, match_objects, normal_label


@dataclass
class _Cluster:
    members: list[tuple[int, Mapping[str, Any]]] = field(default_factory=list)

    def box(self) -> list[float]:
        """The median of the members' edges, as [x, y, w, h]."""
        left = median(float(o["box"][0]) for _, o in self.members)
        top = median(float(o["box"][1]) for _, o in self.members)
        right = median(float(o["box"][0]) + float(o["box"][2]) for _, o in self.members)
        bottom = median(float(o["box"][1]) + float(o["box"][3]) for _, o in self.members)
        return [round(left, 2), round(top, 2), round(right - left, 2), round(bottom - top, 2)]


@dataclass(frozen=True)
class Consensus:
    """One image's consensus objects and how far the workers agree with them."""

    objects: list[dict[str, Any]]
    #: Workers' mean F1 against ``objects`` (1.0: everyone gave the same objects).
    support: float
    #: Workers' mean pairwise F1, None with fewer than two workers.
    pairwise_f1: float | None
    #: Clusters dropped for lack of a majority (objects only a few workers saw).
    dropped: int


def _assign(
    clusters: list[_Cluster], worker: int, answer: Sequence[Mapping[str, Any]], threshold: float
) -> None:
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    taken: set[int] = set()
    if clusters and answer:
        centres = [c.box() for c in clusters]
        overlap = np.array([[iou(o["box"], b) for b in centres] for o in answer])
        weight = np.where(overlap >= threshold, overlap, 0.0)
        for i, j in zip(*linear_sum_assignment(weight, maximize=True), strict=True):
            if weight[i, j] > 0:
                clusters[j].members.append((worker, answer[i]))
                taken.add(int(i))
    for i, obj in enumerate(answer):
        if i not in taken:
            clusters.append(_Cluster([(worker, obj)]))


def _label(cluster: _Cluster) -> str:
    counts = Counter(normal_label(o["label"]) for _, o in cluster.members)
    best = max(counts.values())
    return next(str(o["label"]) for _, o in cluster.members if counts[normal_label(o["label"])] == best)


def consensus(answers: Sequence[Sequence[Mapping[str, Any]]], threshold: float = IOU_THRESHOLD) -> Consensus:
    """The consensus of ``answers`` (one object list per worker, in submission order)."""
    if not answers:
        return Consensus([], 0.0, None, 0)
    clusters: list[_Cluster] = []
    for worker, answer in enumerate(answers):
        _assign(clusters, worker, answer, threshold)
    kept = [c for c in clusters if 2 * len({w for w, _ in c.members}) > len(answers)]
    objects: list[dict[str, Any]] = []
    for cluster in kept:
        box = cluster.box()
        label = _label(cluster)
        named = [o for _, o in cluster.members if normal_label(o["label"]) == normal_label(label)]
        nearest = max(named, key=lambda o: iou(o["box"], box))
        objects.append(
            {
                "label": label,
                "box": box,
                "description": str(nearest.get("description", "")),
                "support": round(len(cluster.members) / len(answers), 4),
            }
        )
    objects.sort(key=lambda o: (o["box"][1], o["box"][0]))
    support = sum(match_objects(a, objects, threshold=threshold).f1 for a in answers) / len(answers)
    pairs = [match_objects(a, b, threshold=threshold).f1 for a, b in combinations(answers, 2)]
    return Consensus(
        objects=objects,
        support=round(support, 4),
        pairwise_f1=round(sum(pairs) / len(pairs), 4) if pairs else None,
        dropped=len(clusters) - len(kept),
    )


def aggregate_object_lists(frame: Any) -> list[AggregatedItem]:
    """``object_clusters`` (``quality.aggregation.aggregate_frame``): one consensus per task.

    ``frame`` is the long (task, worker, label) table whose labels are object
    lists, in submission order. Returns ``AggregatedItem`` rows whose
    confidence is the support figure (the caller turns it into a vote confidence).
    """
    out = []
    for task, group in frame.groupby("task", sort=True):
        answers = [list(a) for a in group["label"]]
        result = consensus(answers)
        out.append(
            AggregatedItem(
                item_id=str(task),
                label=result.objects,
                confidence=result.support,
                votes=len(answers),
                method="object_clusters",
                detail={"pairwise_f1": result.pairwise_f1, "dropped_clusters": result.dropped},
            )
        )
    return out
