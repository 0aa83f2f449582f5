"""The course's ``nbgrader collect``: nbgrader's, refusing a submission whose student id is not a plain id.

A student picks the id a submission is filed under (``nbgrader submit --student ID``; nbgrader refuses only ``+``
and ``*``), and that id becomes a folder name, a gradebook row and text on formgrader's pages, where nbgrader's
template writes it unescaped. So a submission whose id holds anything but letters, digits, ``_``, ``.``, ``@`` or
``-`` is left in the exchange with an error naming it, and never reaches the course.
"""

from __future__ import annotations

from nbgrader.exchange.default.collect import ExchangeCollect

from autograder.deliver.nbgrader_course.sanitise import PLAIN_ID

REFUSED = "attnlab: not collected: a submission filed under the student id %r (ids hold letters, digits, _ . @ -)"


class KitCollect(ExchangeCollect):
    """nbgrader's collect, without the submissions whose student id is not plain (see the module)."""

    def init_src(self) -> None:
        super().init_src()
        kept = []
        for record in self.src_records:
            if PLAIN_ID.fullmatch(record["username"]):
                kept.append(record)
            else:
                self.log.error(REFUSED, record["username"])
        self.src_records = kept
