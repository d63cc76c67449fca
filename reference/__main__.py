"""``python -m numaspec``: the same as the ``numaspec`` command."""

import sys

from numaspec.conformance.cli import main

sys.exit(main())
