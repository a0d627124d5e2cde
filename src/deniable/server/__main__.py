"""``python -m deniable.server``: serve surveys (see :func:`deniable.server._runner.main`)."""

import sys

from deniable.server._runner import main

sys.exit(main())
