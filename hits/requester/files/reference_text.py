"""The prose of docs/campaigns.md; the tables and examples around it are generated (``reference.py``)."""

from __future__ import annotations

INTRODUCTION = """
# The campaign file

A campaign is one batch of work put to the crowd: a list of items (a picture
and a sentence to rate, two descriptions to compare, a list of objects to fix),
the task template that says what a worker does with each item and how answers
are checked, and the rules for money and quality. The campaign file is the
YAML document that names all of it. `hitforge campaign check campaign.yaml`
checks it and shows what it would cost; `hitforge launch campaign.yaml`
checks it again, stores it and publishes its HITs.

The tables and examples below are generated from the code that reads the
file (`hitforge campaign reference`), so a key listed here is a key the
loader takes, with its default and limits, and every example loads.

## The folder

```text
my-campaign/
  campaign.yaml   the keys listed under "Every key"
  items.jsonl     the items, one JSON object a line (each template's format is below)
  gold.jsonl      items whose right answer is known, for templates that check answers
  media/          pictures the items name by a relative path (media_dir: media)
```

Paths in the campaign file (`items`, `gold`, `media_dir`) are relative to the
campaign file. An item's picture is either a path inside `media_dir` or an
`https://` URL. Pictures from `media_dir` reach workers under opaque URLs, so
file names (a `gold/` folder, a model's name) never show on the page, and only
pictures a page shows can be fetched.

A mistake is reported with the file, the line and the field, for instance
`campaign.yaml, line 7, field 'lifetime': not a key of this file; did you mean
lifetime_seconds?`. An unknown key is always refused (a misspelt key would
otherwise be ignored silently), with the closest valid key at that place or,
when none is close, the list of valid keys.

## Check before paying

```text
hitforge campaign check campaign.yaml                 # validate, preview pages, print the plan and cost
hitforge campaign check campaign.yaml --preview-dir preview
hitforge campaign schema > campaign.schema.json       # a JSON Schema for editors
hitforge campaign reference                           # this page
```

`check` validates everything `launch` does without touching the marketplace
or the database, writes an HTML page of each kind of HIT as a worker will see
it (pictures copied next to it, so it opens in a browser), and prints the
plan: HITs, assignments, items and gold per HIT, the reward, the fees, the
total cost and what is left of the budget. It exits with status 1 when the
cost is over the budget and 2 when the files have mistakes. `launch` prints
the same plan before it publishes, and at the end where to watch the campaign.

An editor that understands JSON Schema (the YAML language server in VS Code,
IntelliJ) completes and checks keys as you type when the campaign file
starts with `# yaml-language-server: $schema=campaign.schema.json`.

## HITs, items and gold

* `items_per_hit` counts items from the items file only. `gold_per_hit` gold
  items are added to every HIT on top of them, at random places, and look
  exactly like the others. A HIT page therefore holds `items_per_hit +
  gold_per_hit` items; the last HIT holds fewer items when the items do not
  divide evenly.
* The number of HITs is the number of items divided by `items_per_hit`,
  rounded up: 100 items at 4 a HIT make 25 HITs of 5 slots each with
  `gold_per_hit: 1`.
* Every assignment of a HIT shows the same items in the same places, gold
  included. The plan deals gold from a shuffled pool so that no two HITs share
  a gold item; for that the gold file needs at least HITs x `gold_per_hit`
  items (25 in the example). A smaller pool is refused, because a worker who
  takes several HITs would meet a gold item twice and learn it is gold,
  unless the file sets `allow_gold_reuse: true`.
* Templates without right answers (`write`, `refine`) take no gold: leave out
  `gold` and `gold_per_hit`.

## Money and fees

`reward` is what one assignment pays a worker, written as a string (`"0.10"`)
so cents stay exact. The marketplace adds its fee to every assignment: 20 % of
the reward, 40 % when a HIT has 10 or more assignments, and at least $0.01.
The planned cost is HITs x `assignments_per_hit` x (reward + fee): 25 HITs x
3 assignments x ($0.10 + $0.02) = $9.00. `budget` must cover it, or the launch
is refused before anything is stored. Re-posting rejected work
(`quality.repost_rejected`) and bonuses (`quality.bonus`) are paid from what
the plan leaves of the budget, and each one is checked against it before it is
made.

## Quality in short

Gold answers decide most of it: each worker's gold accuracy is estimated with
its uncertainty, and once the `quality` policy's `confidence` says the
accuracy is above `accuracy_threshold` the worker's work is approved, or below
it (after `min_gold` gold answers) the worker is flagged and their undecided
work rejected or held for a person. Signals (straight-lining, agreement with
the other workers, copying) may flag a worker gold leaves undecided, and a
sample of approved work goes to a person as spot checks. The whole model and
every key of `quality` are explained in [the quality model](quality.md).

## Workflows

A campaign file with a `workflow:` block is the first stage of a workflow:
later stages take the approved output of earlier ones, and a rounds stage
refines one text per picture until it stops changing. Launch such a file with
`hitforge workflow launch`; see [Workflows in the templates
guide](templates.md#workflows-stages-and-sequential-refinement).
"""

TEMPLATES_INTRO = """
Each template below lists its options (the `template_options` mapping), the
format of a line of the items file and of the gold file, and a complete small
campaign that loads as shown (the tests load every one). What each template's
page looks like and how its answers are scored is in [the templates
guide](templates.md).
"""
