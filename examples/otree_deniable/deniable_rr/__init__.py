"""deniable_rr: one yes/no question, answered in the browser and randomized there by deniable-embed.js.

The page shows the question with two buttons that are not part of oTree's form; when the
respondent chooses, deniable-embed.js (local mode) randomizes the answer with the survey design
below and writes only the report, with the design's fingerprint, into the hidden form field
``report``. oTree stores that text and nothing else; the analyst exports the data (CSV) and runs

    deniable analyze all_apps_wide.csv --design FR --p 1/6,1/6 --response deniable_rr.1.player.report

CONFIG is the design's configuration as Python writes it
(``json.dumps(deniable.survey.design("FR", ["1/6", "1/6"]).to_config())``) and FINGERPRINT its
``fingerprint``: the page refuses a report made with any other configuration.
"""

import json

from otree.api import BaseConstants, BaseGroup, BasePlayer, BaseSubsession, Page, models

doc = __doc__


class C(BaseConstants):
    NAME_IN_URL = "deniable_rr"
    PLAYERS_PER_GROUP = None
    NUM_ROUNDS = 1
    CONFIG = ('{"format": "deniable.mechanism", "version": 1, "mechanism": "rr-design", "domain": [false, true], '
              '"epsilon": 1.6094379124341005, "params": {"model": "FR", "p": ["1/6", "1/6"]}}')
    FINGERPRINT = "18f59630de152da6"
    # where the page loads the embed from: a deniable server, or _static/deniable/ (copy the file there)
    EMBED_URL = "/static/deniable/deniable-embed.js"


class Subsession(BaseSubsession):
    pass


class Group(BaseGroup):
    pass


class Player(BasePlayer):
    report = models.LongStringField(blank=False)


def report_problem(value: str) -> str | None:
    """Why ``value`` is not a report deniable-embed made with CONFIG, or None."""
    try:
        data = json.loads(value)
    except ValueError:
        return "the answer was not randomized (is JavaScript on?)"
    if not isinstance(data, dict) or data.get("format") != "deniable.report" or data.get("version") != 1:
        return "the answer was not randomized by deniable-embed"
    if data.get("fingerprint") != C.FINGERPRINT or "report" not in data:
        return "the answer was randomized with another configuration"
    return None


class Question(Page):
    form_model = "player"
    form_fields = ["report"]

    @staticmethod
    def error_message(player: Player, values: dict) -> str | None:
        return report_problem(values["report"])


class Thanks(Page):
    pass


page_sequence = [Question, Thanks]
