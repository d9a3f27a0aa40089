"""The files a requester writes, parsed and checked: the campaign file (``campaign``, with its
quality policy) and a workflow's section of it (``workflow``). Errors name file, line and
field (``hits.requester.fileerrors``). docs/campaigns.md (``reference``, with ``examples``) and
the JSON Schema (``schema``) are generated from the same models."""
