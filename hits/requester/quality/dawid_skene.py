"""Dawid-Skene's worker accuracies in numpy: crowd-kit's fit, step for step, without pandas.

The agreement signal fits Dawid-Skene to every label of a campaign at each
sync batch that has undecided workers (``signals.dawid_skene_accuracy``).
crowd-kit's ``DawidSkene`` does each EM step with pandas joins and group-bys:
at 2,000 HITs (24,000 labels) a fit took about 3.6 s of the 5.9 s a batch's
decision step spent (profiled), and it grows with the campaign. This module
runs the same algorithm on integer-coded arrays: the same initialisation
(majority-vote shares), the same M-step (counts of each worker's given labels
against the task posteriors, floored at crowd-kit's 1e-10 where the worker
gave that label, normalised per true class), the same E-step (log2 priors
plus the log2 error rows, softmax), the same evidence lower bound per label
and the same stopping rule (its gain below ``tol``), so the fitted figures
are crowd-kit's to rounding (``tests/quality/test_dawid_skene.py`` compares
them on random crowds). crowd-kit stays the reference, and the aggregation of
a campaign's results (run once, not per batch) still uses it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

#: crowd-kit's floor for probabilities (``crowdkit.aggregation.utils._EPS``).
EPS = 1e-10


@dataclass(frozen=True)
class Coded:
    """Labels as integer codes: one row per label (its task, worker and given label)."""

    tasks: np.ndarray
    workers: np.ndarray
    labels: np.ndarray
    task_count: int
    worker_ids: list[Hashable]
    classes: int


def _code(values: Sequence[Hashable]) -> tuple[np.ndarray, list[Hashable]]:
    index: dict[Hashable, int] = {}
    codes = np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))
    return codes, list(index)


def code(tasks: Sequence[Hashable], workers: Sequence[Hashable], labels: Sequence[Hashable]) -> Coded:
    """Code three equally long columns (a label per row) as integers."""
    task_codes, task_ids = _code(tasks)
    worker_codes, worker_ids = _code(workers)
    label_codes, label_ids = _code(labels)
    return Coded(task_codes, worker_codes, label_codes, len(task_ids), worker_ids, len(label_ids))


def _m_step(data: Coded, probas: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Each worker's error matrix, as rows (worker, given label) by columns (true label)."""
    k = data.classes
    errors = np.zeros((len(data.worker_ids) * k, k))
    np.add.at(errors, data.workers * k + data.labels, probas[data.tasks])
    # crowd-kit has rows only for labels a worker gave: only those are floored and normalised over.
    errors[observed] = np.maximum(errors[observed], EPS)
    per_worker = errors.reshape(len(data.worker_ids), k, k).sum(axis=1)
    return (errors.reshape(len(data.worker_ids), k, k) / per_worker[:, None, :]).reshape(-1, k)


def _e_step(data: Coded, priors: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """The tasks' posteriors over the true label."""
    rows = data.workers * data.classes + data.labels
    with np.errstate(divide="ignore"):  # rows never used hold zeros; only used rows are read
        log_errors = np.log2(errors[rows])
    log_likelihood = np.zeros((data.task_count, data.classes))
    np.add.at(log_likelihood, data.tasks, log_errors)
    log_likelihood += np.log2(np.maximum(priors, EPS))
    scaled = np.exp2(log_likelihood - log_likelihood.max(axis=1, keepdims=True))
    return scaled / scaled.sum(axis=1, keepdims=True)  # type: ignore[no-any-return]


def _lower_bound(data: Coded, probas: np.ndarray, priors: np.ndarray, errors: np.ndarray) -> float:
    """crowd-kit's evidence lower bound: per label, the posterior-weighted log error and log prior,
    plus the tasks' entropy (posteriors floored at ``EPS``), over the number of labels."""
    rows = data.workers * data.classes + data.labels
    log_terms = np.log(errors[rows]) + np.log(np.maximum(priors, EPS))
    joint = float((probas[data.tasks] * log_terms).sum())
    floored = np.maximum(probas, EPS)
    entropy = float(-(np.log(floored) * floored).sum())
    return (joint + entropy) / len(data.tasks)


@dataclass(frozen=True)
class Fit:
    """A fitted model: the class priors and each worker's error matrix (rows: given, columns: true)."""

    priors: np.ndarray
    errors: np.ndarray
    observed: np.ndarray
    iterations: int


def fit(data: Coded, *, n_iter: int = 100, tol: float = 1e-5) -> Fit:
    """Fit Dawid-Skene by EM from majority-vote shares, as ``crowdkit.aggregation.DawidSkene`` does."""
    k = data.classes
    counts = np.zeros((data.task_count, k))
    np.add.at(counts, (data.tasks, data.labels), 1.0)
    probas = counts / counts.sum(axis=1, keepdims=True)
    observed = np.zeros(len(data.worker_ids) * k, dtype=bool)
    observed[data.workers * k + data.labels] = True
    priors = probas.mean(axis=0)
    errors = _m_step(data, probas, observed)
    loss = -np.inf
    iterations = 0
    while iterations < n_iter:
        iterations += 1
        probas = _e_step(data, priors, errors)
        priors = probas.mean(axis=0)
        errors = _m_step(data, probas, observed)
        new_loss = _lower_bound(data, probas, priors, errors)
        if new_loss - loss < tol:
            break
        loss = new_loss
    return Fit(np.maximum(priors, EPS), errors, observed, iterations)


def worker_accuracies(data: Coded, model: Fit) -> dict[Hashable, float]:
    """Each worker's accuracy: the diagonal of their error matrix weighted by the class priors.

    A label the worker never gave contributes zero (crowd-kit has no row for it).
    """
    k = data.classes
    diagonal = model.errors.reshape(-1, k, k)[:, np.arange(k), np.arange(k)]
    given = model.observed.reshape(-1, k)
    accuracy = (np.where(given, diagonal, 0.0) * model.priors).sum(axis=1)
    return {worker: float(accuracy[i]) for i, worker in enumerate(data.worker_ids)}
