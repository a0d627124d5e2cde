"""Bots: ``otree test deniable_rr [N]``.

A bot cannot run JavaScript, so it submits field texts as deniable-embed.js writes them: those
in the JSON list at DENIABLE_OTREE_REPORTS when set (the repository's test suite makes them
with the embed), else two made here. The page must refuse an answer that was not randomized
and a report of another configuration, and the player must keep exactly the submitted text.
"""

import json
import os
from pathlib import Path

from otree.api import Bot, Submission, SubmissionMustFail, expect

from . import C, Question


def _field(report: object, fingerprint: str = C.FINGERPRINT) -> str:
    return json.dumps({"format": "deniable.report", "version": 1, "fingerprint": fingerprint, "report": report},
                      separators=(",", ":"))


def _reports() -> list[str]:
    path = os.environ.get("DENIABLE_OTREE_REPORTS")
    return json.loads(Path(path).read_text()) if path else [_field(True), _field(False)]


class PlayerBot(Bot):
    def play_round(self):
        reports = _reports()
        text = reports[(self.participant.id_in_session - 1) % len(reports)]
        expect("deniable-embed.js", "in", self.html)
        yield SubmissionMustFail(Question, {"report": "true"})
        yield SubmissionMustFail(Question, {"report": _field(True, "0123456789abcdef")})
        yield Submission(Question, {"report": text})
        expect(self.player.report, text)
