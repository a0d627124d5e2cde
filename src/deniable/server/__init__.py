"""The collection service: survey definitions, storage, the FastAPI app and its runner.

Needs the ``server`` extra (``pip install 'deniable[server]'``)::

    from deniable.server import BackgroundServer
    with BackgroundServer(["examples/honor-code.yaml"]) as server:
        ...  # devices use deniable.client.Client(server.url)
"""

from deniable.server._app import create_app
from deniable.server._errors import Conflict, Forbidden, Invalid, NotFound, StorageError
from deniable.server._runner import BackgroundServer, PortInUseError, run
from deniable.server._storage import Storage
from deniable.server._surveys import Question, Survey, SurveyError, load_survey

__all__ = [
    "BackgroundServer",
    "Question",
    "Storage",
    "Survey",
    "SurveyError",
    "create_app",
    "load_survey",
    "run",
    "StorageError",
    "NotFound",
    "Conflict",
    "Forbidden",
    "Invalid",
    "PortInUseError",
]
