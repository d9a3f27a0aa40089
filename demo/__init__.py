"""The demo and the simulations: everything that pretends, in one place.

A simulated crowd of bots that use the worker site over HTTP (``crowd``,
``profiles``), drawn demo data whose truth is known (``data``,
``picture_names``, ``judgment_media``), a demo campaign for every built-in
template (``tasks``), the quality simulation (``simulation``), and the
``hitforge demo`` runner (``run``, ``iiw``, ``context``, ``runner``, ``cli``).

It may import anything of the product; nothing of the product imports it
(``tests/test_layers.py``). Its commands join ``hitforge`` through the
``hitforge.commands`` entry-point group.
"""
