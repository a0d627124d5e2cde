"""An oTree project with one app, deniable_rr: a sensitive yes/no question randomized on the respondent's device.

Run it with oTree (``pip install otree``, in its own environment: oTree pins old versions of
Starlette and SQLAlchemy): ``otree devserver`` to try it, ``otree test deniable_rr`` for its bots.
"""

from os import environ

SESSION_CONFIGS = [
    dict(name="deniable_rr", display_name="A question randomized on the device (deniable)",
         app_sequence=["deniable_rr"], num_demo_participants=4),
]

SESSION_CONFIG_DEFAULTS = dict(real_world_currency_per_point=1.00, participation_fee=0.00, doc="")
PARTICIPANT_FIELDS: list[str] = []
SESSION_FIELDS: list[str] = []

LANGUAGE_CODE = "en"
REAL_WORLD_CURRENCY_CODE = "USD"
USE_POINTS = True

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = environ.get("OTREE_ADMIN_PASSWORD")

DEMO_PAGE_INTRO_HTML = "A sensitive question, randomized with deniable-embed.js before it is stored."

SECRET_KEY = environ.get("OTREE_SECRET_KEY", "set OTREE_SECRET_KEY in production")
