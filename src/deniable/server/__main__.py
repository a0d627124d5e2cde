"""``python -m deniable.server``: serve surveys (see :func:`deniable.server.runner.main`)."""

import sys

from deniable.server.runner import main

sys.exit(main())
