"""Local stand-ins for Qualtrics, LimeSurvey and REDCap survey pages, built around the recipes' snippets.

Each page is what the platform serves a respondent, reduced to the parts a
recipe touches, following the platform's documented behaviour:

* Qualtrics: the survey header (the "Look & feel" header HTML), a Text/Graphic
  question's HTML inside ``<div id="QID1">``, its JavaScript registered as
  Qualtrics registers question JavaScript (``Qualtrics.SurveyEngine.addOnload``
  runs the callback once the page has loaded, with the question object as
  ``this``: ``questionId``, ``getQuestionContainer()``, ``disableNextButton()``,
  ``enableNextButton()``, ``clickNextButton()``); ``setEmbeddedData(name, v)``
  and ``setJSEmbeddedData(name, v)`` (stored as ``__js_<name>``) keep values that
  are recorded only for fields declared in the survey flow; *Next* records the
  response (posted to ``/record`` here) and shows the end of survey.
* LimeSurvey: the ``limesurvey`` form of a question page, the question text
  after the expression manager (``{QCODE.sgqa}`` replaced by the question's SGQA
  code; any other ``{`` followed by a non-space is an expression, which an
  unknown name turns into an error), a hidden short-text question whose input
  is ``answer<SGQA>`` named ``<SGQA>``, and *Next* posting the form.
* REDCap: the survey page's ``form`` with ``#questiontable``, one
  ``<tr id="<field>-tr" sq_id="<field>">`` per field (a descriptive field's one
  cell; a text box named after its field, its row hidden for ``@HIDDEN-SURVEY``),
  the injected JavaScript at the end of the page, and *Submit* posting the form.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs" / "howto" / "platforms"

SID, GID, QID = 461723, 12, 88
SGQA = f"{SID}X{GID}X{QID}"
QUALTRICS_DECLARED = ("__js_deniable_report",)

_VIEWPORT = '<meta name="viewport" content="width=device-width, initial-scale=1">'


def snippet(page: str, marker: str) -> str:
    """The fenced code block of ``docs/howto/platforms/<page>`` whose first line holds ``marker``, dedented."""
    text = (DOCS / page).read_text()
    for match in re.finditer(r"^([ \t]*)```[a-z]*\n(.*?)^\1```", text, re.M | re.S):
        block = textwrap.dedent(match.group(2))
        if marker in block.splitlines()[0]:
            return block
    raise LookupError(f"no code block marked {marker!r} in {page}")


def with_embed(html: str, url: str, integrity: str) -> str:
    """A snippet's ``<script src=...deniable-embed.js integrity=...>`` pointed at ``url`` with the real hash."""
    html = re.sub(r'src="https://deniable\.example\.org(/static/deniable-embed\.js)"', rf'src="{url}\1"', html)
    return re.sub(r'integrity="sha384-\(from deniable-embed\.json\)"', f'integrity="{integrity}"', html)


def qualtrics_page(header: str, question_html: str, question_js: str) -> str:
    engine = """
    window.Qualtrics = { SurveyEngine: (function () {
      var embedded = {}, loads = [], submits = [], defining = null;
      function Question(id) { this.questionId = id; }
      var next = function () { return document.getElementById('NextButton'); };
      Question.prototype.getQuestionContainer = function () { return document.getElementById(this.questionId); };
      Question.prototype.disableNextButton = function () { next().disabled = true; };
      Question.prototype.enableNextButton = function () { next().disabled = false; };
      Question.prototype.clickNextButton = function () { next().click(); };
      return {
        addOnload: function (fn) { loads.push([defining, fn]); },
        addOnReady: function (fn) { loads.push([defining, fn]); },
        addOnUnload: function () {},
        addOnPageSubmit: function (fn) { submits.push([defining, fn]); },
        setEmbeddedData: function (name, value) { embedded[name] = String(value); },
        setJSEmbeddedData: function (name, value) { embedded['__js_' + name] = String(value); },
        getEmbeddedData: function (name) { return embedded[name]; },
        getJSEmbeddedData: function (name) { return embedded['__js_' + name]; },
        _define: function (id, code) { defining = new Question(id); code(); defining = null; },
        _load: function () { loads.forEach(function (l) { l[1].call(l[0]); }); },
        _submit: function () {
          submits.forEach(function (s) { s[1].call(s[0], 'next'); });
          var record = {};
          DECLARED.forEach(function (name) { record[name] = embedded[name] === undefined ? '' : embedded[name]; });
          return record;
        },
      };
    })() };
    """.replace("DECLARED", repr(list(QUALTRICS_DECLARED)))
    finish = """
    document.addEventListener('DOMContentLoaded', function () {
      Qualtrics.SurveyEngine._load();
      document.getElementById('NextButton').addEventListener('click', function () {
        var record = Qualtrics.SurveyEngine._submit();
        fetch('/record', { method: 'POST', body: JSON.stringify(record) }).then(function () {
          document.getElementById('Questions').innerHTML = '<div class="EndOfSurvey">We thank you for your time '
            + 'spent taking this survey. Your response has been recorded.</div>';
          document.body.dataset.state = 'recorded';
        });
      });
    });
    """
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{_VIEWPORT}
<title>Qualtrics Survey | Qualtrics Experience Management</title>
<style>
body {{ margin: 0; font-family: Arial, sans-serif; background: #f2f2f2; color: #404040; }}
#Header {{ background: #fff; padding: 12px 20px; border-bottom: 1px solid #ddd; font-weight: bold; }}
#Questions {{ max-width: 760px; margin: 24px auto; background: #fff; padding: 24px; box-sizing: border-box; }}
.QuestionText {{ font-size: 18px; line-height: 1.5; }}
.deniable-options label {{ display: block; padding: 10px 12px; margin: 6px 0;
  border: 1px solid #ccc; border-radius: 4px; }}
.deniable-note {{ font-size: 14px; color: #666; }}
#Buttons {{ text-align: right; margin-top: 16px; }}
#NextButton {{ background: #0b6ed0; color: #fff; border: 0; padding: 10px 24px; font-size: 18px; border-radius: 4px; }}
#NextButton:disabled {{ opacity: .4; }}
</style>
<script>{engine}</script>
</head><body>
<div id="Header">{header}University survey</div>
<div id="Questions"><div id="QID1" class="QuestionOuter">
<div class="QuestionText BorderColor">{question_html}</div></div>
<div id="Buttons"><button id="NextButton" type="button">&rarr;</button></div></div>
<script>Qualtrics.SurveyEngine._define('QID1', function () {{
{question_js}
}});</script>
<script>{finish}</script>
</body></html>"""


def expression_manager(text: str) -> str:
    """LimeSurvey's expression manager on a question text: ``{deniable.sgqa}`` is the hidden question's
    SGQA; any other ``{`` directly followed by a non-space starts an expression, here an unknown one."""
    text = text.replace("{deniable.sgqa}", SGQA)
    return re.sub(r"\{(?=\S)[^{}]*\}", "{ERROR: unknown variable}", text)


def limesurvey_page(question_text: str) -> str:
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{_VIEWPORT}
<title>Study habits - LimeSurvey</title>
<style>
body {{ margin: 0; font-family: "Source Sans Pro", Arial, sans-serif; background: #fff; color: #1e1e1e; }}
.top-container {{ background: #14ae5c; color: #fff; padding: 14px 20px; font-size: 20px; }}
.group-container {{ max-width: 800px; margin: 0 auto; padding: 16px; }}
.question-container {{ border: 1px solid #ddd; border-radius: 6px; padding: 16px; margin-bottom: 16px; }}
.ls-hidden {{ display: none; }}
.deniable-options label {{ display: block; padding: 10px 12px; margin: 6px 0;
  border: 1px solid #ccc; border-radius: 4px; }}
.deniable-note {{ color: #555; font-size: 14px; }}
#ls-button-submit {{ float: right; background: #14ae5c; color: #fff; border: 0; padding: 10px 22px;
  font-size: 16px; border-radius: 4px; }}
</style></head><body>
<div class="top-container">Study habits</div>
<form id="limesurvey" name="limesurvey" method="post" action="/index.php/{SID}">
<div class="group-container" id="group-0">
<div id="question89" class="question-container text-long boilerplate">
<div class="question-title-container"><div class="ls-label-question">{expression_manager(question_text)}</div></div>
</div>
<div id="question{QID}" class="question-container text-short ls-hidden">
<div class="ls-label-question">Report</div>
<div class="answer-container"><input type="text" class="form-control" name="{SGQA}" id="answer{SGQA}" value=""></div>
</div>
<input type="hidden" name="fieldnames" value="{SGQA}">
<input type="hidden" name="thisstep" value="1"><input type="hidden" name="sid" value="{SID}">
<input type="hidden" name="LEMpostKey" value="741625098">
<button type="submit" id="ls-button-submit" name="move" value="movenext"
  class="ls-move-btn ls-move-next-btn">Next</button>
</div></form></body></html>"""


def redcap_page(page_scripts: str, survey_js: str) -> str:
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{_VIEWPORT}
<title>REDCap</title>
<style>
body {{ margin: 0; font-family: "Open Sans", Helvetica, Arial, sans-serif; background: #f3f3f3; color: #000; }}
#pagecontainer {{ max-width: 800px; margin: 0 auto; background: #fff; }}
#surveytitle {{ padding: 16px 20px; font-size: 20px; font-weight: bold; border-bottom: 1px solid #ddd; }}
#questiontable {{ width: 100%; border-collapse: collapse; }}
#questiontable td {{ padding: 14px 20px; border-bottom: 1px solid #eee; font-size: 15px; }}
.deniable-options label {{ display: block; padding: 10px 12px; margin: 8px 0 0;
  border: 1px solid #ccc; border-radius: 4px; }}
.deniable-note {{ color: #555; font-size: 13px; }}
.btn-primaryrc {{ background: #337ab7; color: #fff; border: 0; padding: 8px 18px; font-size: 15px;
  border-radius: 4px; margin: 16px 20px; }}
</style></head><body>
<div id="pagecontainer"><div id="surveytitle">Study habits</div>
<form id="form" name="form" method="post" action="/surveys/?s=HKJ7R3W8AL" enctype="application/x-www-form-urlencoded">
<table id="questiontable" class="form_border"><tbody>
<tr id="deniable_question-tr" sq_id="deniable_question"><td class="labelrc col-12" colspan="2">
<div data-mlm-field="deniable_question" data-mlm-type="label">
Have you ever used notes you were not allowed during an exam?</div></td></tr>
<tr id="deniable_report-tr" sq_id="deniable_report" class="@HIDDEN-SURVEY" style="display:none">
<td class="labelrc col-7">Report</td><td class="data col-5">
<input type="text" class="x-form-text x-form-field" name="deniable_report" value=""></td></tr>
<tr class="surveysubmit"><td colspan="2"><input type="hidden" name="__page__" value="1">
<input type="hidden" name="__response_hash__" value="">
<button class="btn btn-primaryrc" type="submit" name="submit-btn-saverecord">Submit</button></td></tr>
</tbody></table></form></div>
{page_scripts}
<script>
{survey_js}
</script>
</body></html>"""
