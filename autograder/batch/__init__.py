"""``attnlab grade-batch``: every submission of a folder graded in parallel, locally or on a Dask cluster.

- :mod:`autograder.batch.discover`: who handed in what (a folder per student, nbgrader's ``submitted/``,
  a Gradescope export).
- :mod:`autograder.batch.job`: one student's grading, as a job a thread or a Dask worker runs.
- :mod:`autograder.batch.records`: each student's result on disk (resumable), the CSV for a gradebook.
- :mod:`autograder.batch.summary`: the class summary (table, bar chart, HTML page).
- :mod:`autograder.batch.run`: the coordinator.
"""
