"""``python -m autograder`` is ``attnlab``."""

import sys

from autograder.cli import main

sys.exit(main())
