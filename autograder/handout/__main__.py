"""``python -m autograder.handout``: the same as ``attnlab handout``."""

import sys

from autograder.handout import main

sys.exit(main())
