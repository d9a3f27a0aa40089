"""The numpy Dawid-Skene gives crowd-kit's figures: the same workers' accuracies on random crowds.

crowd-kit's ``DawidSkene`` is the reference (``signals`` used it for every
sync batch until it was measured as most of a batch's decision step); the
numpy fit must agree with it to rounding on crowds of every shape: many or
few classes, workers who never give some label, tasks with one label,
adversarial and constant workers, string and integer labels.
"""

from __future__ import annotations

import random

import pandas as pd
import pytest
from crowdkit.aggregation import DawidSkene
from hypothesis import given, settings
from hypothesis import strategies as st

from hits.requester.quality import dawid_skene


def _reference(frame: pd.DataFrame) -> dict[object, float]:
    """The accuracies as the agreement signal computed them with crowd-kit (its former code)."""
    model = DawidSkene(n_iter=100).fit(frame[["task", "worker", "label"]])
    errors, priors = model.errors_, model.priors_
    assert errors is not None and priors is not None
    cells = errors.stack()
    given_ = cells.index.get_level_values("label")
    true = cells.index.get_level_values(-1)
    diagonal = cells[given_ == true]
    weights = priors.reindex(diagonal.index.get_level_values(-1)).to_numpy()
    weighted = pd.Series(diagonal.to_numpy() * weights, index=diagonal.index.get_level_values("worker"))
    per_worker = weighted.groupby(level=0).sum()
    return {worker: float(per_worker.get(worker, 0.0)) for worker in frame["worker"].unique()}


def _crowd(seed: int, tasks: int, workers: int, classes: int, per_task: int) -> pd.DataFrame:
    rng = random.Random(seed)
    truth = [rng.randrange(classes) for _ in range(tasks)]
    kinds = [rng.choice(("good", "good", "good", "random", "fixed", "shifted")) for _ in range(workers)]
    rows = []
    for task in range(tasks):
        for worker in rng.sample(range(workers), min(per_task, workers)):
            kind, true = kinds[worker], truth[task]
            if kind == "good":
                label = true if rng.random() < 0.85 else rng.randrange(classes)
            elif kind == "fixed":
                label = worker % classes
            elif kind == "shifted":
                label = (true + 1) % classes
            else:
                label = rng.randrange(classes)
            rows.append((f"t{task}", f"w{worker}", label))
    return pd.DataFrame(rows, columns=["task", "worker", "label"])


def _numpy(frame: pd.DataFrame) -> dict[object, float]:
    data = dawid_skene.code(list(frame["task"]), list(frame["worker"]), list(frame["label"]))
    return dawid_skene.worker_accuracies(data, dawid_skene.fit(data))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    tasks=st.integers(1, 60),
    workers=st.integers(1, 12),
    classes=st.integers(2, 5),
    per_task=st.integers(1, 4),
)
def test_the_numpy_fit_gives_crowd_kits_accuracies(
    seed: int, tasks: int, workers: int, classes: int, per_task: int
) -> None:
    frame = _crowd(seed, tasks, workers, classes, per_task)
    expected, got = _reference(frame), _numpy(frame)
    assert got.keys() == expected.keys()
    for worker, accuracy in expected.items():
        assert got[worker] == pytest.approx(accuracy, abs=1e-7), (worker, got[worker], accuracy)


def test_a_campaign_sized_crowd_and_string_labels_agree_too() -> None:
    frame = _crowd(7, 600, 40, 4, 3)
    frame["label"] = frame["label"].map(lambda n: f"rating {n + 1}")
    expected, got = _reference(frame), _numpy(frame)
    assert max(abs(got[w] - expected[w]) for w in expected) < 1e-7
