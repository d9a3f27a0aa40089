"""The wire layer: what the marketplace and the requester side both speak, below both.

MTurk's XML documents and their schemas (``documents``, ``xml_schemas``,
``schemas/``), a layout's ``${name}`` substitution (``layout``), the service
limits both sides check (``limits``) and the rules for outbound requests to
addresses a requester names (``destinations``). Nothing here imports either
half; both import it (``tests/test_layers.py``).
"""
