"""What a HIT page holds, below the templates that render it: its URL token (``urls``) and
which of its slots are gold and who saw them (``gold``). The web part is
``server/requester/hit_pages``."""
