"""The collection service: survey definitions, storage, the FastAPI app and its runner.

Needs the ``server`` extra (``pip install 'deniable[server]'``)::

    from deniable.server import BackgroundServer
    with BackgroundServer(["examples/honor-code.yaml"]) as server:
        ...  # devices use deniable.client.Client(server.url)
"""

from deniable.server.app import create_app
from deniable.server.runner import BackgroundServer, run
from deniable.server.storage import Storage
from deniable.server.surveys import Question, Survey, SurveyError, load_survey

__all__ = [
    "BackgroundServer",
    "Question",
    "Storage",
    "Survey",
    "SurveyError",
    "create_app",
    "load_survey",
    "run",
]
