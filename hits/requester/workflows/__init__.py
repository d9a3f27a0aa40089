"""Multi-stage campaigns: stages fed by earlier stages, and sequential refinement in rounds.

* ``spec``: the ``workflow:`` block of a campaign file.
* ``models``: workflows, stages, chains (one picture's way through a rounds
  stage) and rounds.
* ``setup``: creating a workflow's stage campaigns and chains from a file.
* ``engine``: advancing chains from approved work (one transaction, under the
  workflow's lock, within its budget).
* ``publish``: seeding and creating round HITs through the API, exactly once.
* ``metrics`` and ``report``: the per-round record and its summaries.

Every stage is an ordinary campaign: the review pipeline syncs, grades and
decides its work as any other's; the workflow only reads those decisions.
"""
