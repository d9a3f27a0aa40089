"""The marketplace's web half: the MTurk requester API and the worker site, and their clock.

``mturk_api`` speaks MTurk's wire protocol to requesters' clients (boto3);
``worker_site`` is where crowd workers sign in, take qualifications, accept
and submit HITs; ``clock`` expires assignments and HITs as requests arrive.
They read and write the marketplace's database only, and never import the
requester's web half (``tests/test_layers.py``); what the halves lend each
other goes through ``server.capabilities``.
"""
