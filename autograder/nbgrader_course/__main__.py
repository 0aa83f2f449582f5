"""``python -m autograder.nbgrader_course DIR`` is ``attnlab nbgrader-course DIR``."""

import sys

from autograder.nbgrader_course import main

sys.exit(main())
