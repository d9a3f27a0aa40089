"""Quality control: gold scoring, worker decisions, and the review pipeline.

Requester side (the simulation that measures the model is ``demo.simulation``):

* rules, pure (no database, no clock): ``policy``, ``signals``, ``copying``;
* the pipeline a Celery worker runs: ``sync_queue`` (which HITs to read, and
  when), ``pipeline`` (read, record, close), ``review`` (grade and decide),
  ``live_signals`` and ``live_copying`` (the rules on a running campaign's
  records), ``followups`` (blocks, bonuses, re-posts), ``outbox`` (applied
  through the API exactly once);
* QA staff's decisions from the dashboard: ``qa_review``;
* results: ``aggregation`` (one label per item, agreement), ``ranking``.
"""

#: Every aggregation a template may declare. Here, not in ``aggregation``, so the
#: CLI can offer them without importing pandas.
METHODS = (
    "majority_vote",
    "dawid_skene",
    "glad",
    "binary_relevance",
    "token_majority",
    "collect_all",
    "bradley_terry",
    "median_per_key",
    "object_clusters",
    "davidson",
)
