"""The requester side's domain: what a requester runs on top of the MTurk API.

From the bottom up (``tests/test_layers.py`` keeps the order):

* ``tables`` (the requester database's tables), ``fileerrors`` (how a file's
  mistakes are reported), ``mturk`` (the one boto3 facade: the only way this
  side reaches the marketplace);
* ``heatmaps`` (where the heatmap template's pictures come from);
* ``templates`` (task templates: item schemas, pages, answer checks, gold
  scoring, aggregation choices) and ``seeders`` (what starts a workflow);
* ``quality`` (gold, decisions, the review pipeline, the outbox, aggregation);
* ``batches`` (MTurk-style layout batches), ``campaigns`` (campaign files,
  planning, publishing, export, staff scopes), ``workflows`` (campaigns
  chained into stages).
"""
