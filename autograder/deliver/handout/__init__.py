"""The lab handout: generated blocks, figures and the rendered page (``attnlab handout``).

``handouts/lab07_attention.md`` is written by hand except for its marked
blocks, which are generated from the registry, the stubs, the graders, the
diagnosis and the catalog copy (:mod:`.generate`). The figures under
``handouts/figures/`` are drawn from the reference solution (:mod:`.figures`).
The HTML page (:mod:`.html`) is built into ``handouts/build/`` (not committed).

Commands (run from the instructor kit; :mod:`autograder.cli.handout`):

- ``attnlab handout``: regenerate blocks and figures, build the HTML page.
- ``attnlab handout --check``: only report what is stale (exit 1), write nothing.
- ``attnlab handout --screenshot PATH`` / ``--pdf PATH``: also open the page in
  headless chromium and save a screenshot / a PDF.
- ``attnlab handout --sample-timing``: re-measure the sample timings first.
"""
