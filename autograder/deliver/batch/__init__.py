"""``attnlab grade-batch``: every submission of a folder graded in parallel, locally or on a Dask cluster.

- :mod:`autograder.deliver.batch.discover`: who handed in what (a folder per student, nbgrader's ``submitted/``,
  a Gradescope export).
- :mod:`autograder.deliver.batch.job`: one student's grading, as a job a thread or a Dask worker runs.
- :mod:`autograder.deliver.batch.records`: each student's result on disk (resumable), the CSV for a gradebook.
- :mod:`autograder.deliver.batch.summary`: the class summary (table, bar chart, HTML page).
- :mod:`autograder.deliver.batch.run`: the coordinator.
"""
