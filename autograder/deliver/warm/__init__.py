"""The warm grader: one process keeps the grader's imports and the sandbox fork server, each student gets a fork.

Used by ``nbgrader autograde`` (the notebook's grade cells, through
:mod:`autograder.deliver.nbgrader_course.run`) and by ``attnlab grade-batch`` (through
:mod:`autograder.deliver.batch.job`), locally or on each machine of a Dask cluster.

- :mod:`autograder.deliver.warm.address`: where a server listens (a folder only this user can enter).
- :mod:`autograder.deliver.warm.client`: grade one request, warm if possible, else in a fresh process; typed outcomes.
- :mod:`autograder.deliver.warm.server`: the server and its workers (imported only by the processes it starts).
"""
