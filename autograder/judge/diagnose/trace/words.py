"""A proved departure, an upstream culprit or an error's cause in one sentence, in the student's language."""

from __future__ import annotations

import io
import tokenize
from typing import Any

from autograder.base import tasks
from autograder.i18n import _, counted
from autograder.judge import messages
from autograder.judge.diagnose.trace import match, ops
from autograder.judge.diagnose.trace.follow import Edit
from autograder.judge.diagnose.trace.model import Trace
from autograder.judge.diagnose.trace.upstream import Callee

CODE_CHARS = 90


def _code(text: str) -> str:
    """A line of the student's code as the message quotes it: its comment left out, shortened."""
    text = " ".join(_without_comment(text).split())
    return text if len(text) <= CODE_CHARS else text[: CODE_CHARS - 3] + "..."


def _without_comment(line: str) -> str:
    """``line`` up to its comment (a ``#`` inside a string stays); the line itself if it does not tokenize."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type == tokenize.COMMENT:
                return line[: token.start[1]].rstrip()
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return line


def place(student: Trace, node: int, at: int | None = None) -> str | None:
    """Where the student's ``node`` was computed (or the student's event ``at`` used it): 'line 12 of softmax.py
    (`e = np.exp(x)`)', if the trace knows."""
    event = student.events[at] if at is not None else student.made_by(node) if node >= 0 else None
    while event is not None and event.file is None and event.parent >= 0:
        event = student.events[event.parent]
    if event is None or event.file is None:
        return None
    file, line, text = student.source(event)
    where = _(messages.TRACE_PLACE).format(line=line, file=file)
    return f"{where} (`{_code(text)}`)" if text else where


def _value(student: Trace, node: int) -> str:
    """A student's value in words: an input by its name, else the line that computed it."""
    if node < 0:
        return _(messages.TRACE_VALUE)
    item = student.nodes[node]
    if item.kind == "input" and item.name:
        return _(messages.TRACE_INPUT).format(name=item.name)
    given = student.given_by(node)
    if given is not None and given.lab and given.depth > 0 and given.line:
        return _(messages.TRACE_RESULT_OF).format(function=given.function, line=given.line)
    event = student.made_by(node)
    if event is not None and event.line:
        return _(messages.TRACE_VALUE_AT).format(line=event.line)
    return _(messages.TRACE_VALUE)


def _reference_value(reference: Trace, student: Trace, node: int) -> str:
    """A reference value in words, by where the student holds it (an input by name)."""
    item = reference.nodes[node]
    if item.kind == "input" and item.name:
        return _(messages.TRACE_INPUT).format(name=item.name)
    holders = match.Index(student).holding(item.value) if item.value is not None else []
    return _value(student, holders[0]) if holders else _(messages.TRACE_VALUE)


def _shown(value: Any) -> str:
    if isinstance(value, dict) and set(value) in ({"l"}, {"t"}):
        return "(" + ", ".join(_shown(v) for v in next(iter(value.values()))) + ")"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _other_operand(reference: Trace, edit: Edit) -> str | None:
    """The other operand of a binary operation left out, when it has a name (an input) or is a number."""
    call = ops.canonical(reference.events[edit.event])
    others = [n for n in call.operands if n != edit.node]
    if len(others) == 1 and not call.constants:
        item = reference.nodes[others[0]]
        if item.kind == "input" and item.name:
            return _(messages.TRACE_INPUT).format(name=item.name)
        if item.kind == "const" and item.value is not None and item.value.size == 1:
            return _shown(item.value.item())
    if not others and len(call.constants) == 1:
        return _shown(call.constants[0])
    return None


def how(edit: Edit, student: Trace, reference: Trace) -> str:
    """What one edit says, as the clause after the place."""
    op = f"`{ops.shown(edit.op)}`"
    if edit.label == "param" and "call" in edit.detail:
        return _(messages.TRACE_ARGUMENTS).format(op=op)
    if edit.label in ("axis", "param", "constant"):
        key, (mine, theirs) = next(iter(edit.detail.items()))
        if edit.label == "axis":
            return _(messages.TRACE_AXIS).format(op=op, student=_shown(theirs), reference=_shown(mine))
        if edit.label == "constant":
            return _(messages.TRACE_CONSTANT).format(op=op, student=_shown(theirs), reference=_shown(mine))
        return _(messages.TRACE_PARAM).format(op=op, name=key, student=_shown(theirs), reference=_shown(mine))
    if edit.label == "operand":
        original, _holder = edit.detail["operand"]
        return _(messages.TRACE_OPERAND).format(
            op=op,
            student=_value(student, edit.detail.get("student_operand", -1)),
            reference=_reference_value(reference, student, original),
        )
    if edit.label == "missing":
        held = edit.student >= 0
        operand = _value(student, edit.student) if held else _reference_value(reference, student, edit.node)
        other = _other_operand(reference, edit)
        if other is not None:
            return _(messages.TRACE_MISSING_WITH).format(op=op, other=other, operand=operand)
        return _(messages.TRACE_MISSING).format(op=op, operand=operand)
    if edit.label == "extra":
        return _(messages.TRACE_EXTRA).format(op=op)
    if edit.label == "returns":
        _output, other = edit.detail["returned"]
        return _(messages.TRACE_RETURNS).format(reference=_reference_value(reference, student, other))
    if edit.label == "dtype":
        return _(messages.TRACE_DTYPE).format(dtype=student.nodes[edit.student].dtype.removeprefix("torch."))
    return _(messages.TRACE_OTHER).format(op=op)


def finding(edits: tuple[Edit, ...], student: Trace, reference: Trace) -> str:
    """The sentence of a proved explanation: its first departure, and how many more there are."""
    first = edits[0]
    clause = how(first, student, reference)
    where = place(student, first.student, first.detail.get("at"))
    sentence = _(messages.TRACE_AT).format(where=where, how=clause) if where else clause
    if len(edits) > 1:
        again = all((e.kind, e.label, e.op) == (first.kind, first.label, first.op) for e in edits)
        sentence += counted(messages.TRACE_AGAIN if again else messages.TRACE_MORE, len(edits) - 1).format(
            count=len(edits) - 1
        )
    return sentence


def upstream(culprits: list[Callee], mistake: str | None = None) -> str:
    """The sentence that sends the student to the earlier step whose function is wrong (and what is wrong there)."""
    callee = culprits[0]
    step = callee.step
    number = tasks.STEPS.index(step) + 1 if step is not None else "?"
    title = _(step.title) if step is not None else callee.module
    sentence = _(messages.UPSTREAM).format(function=callee.name, file=f"{callee.module}.py", number=number, title=title)
    return _(messages.UPSTREAM_THERE).format(upstream=sentence, mistake=mistake) if mistake else sentence


def upstream_and_own(upstream_sentence: str, culprits: list[Callee], own: str) -> str:
    return _(messages.UPSTREAM_AND_OWN).format(upstream=upstream_sentence, function=culprits[0].name, own=own)


def cause_of_error(callee: Callee, raised: str | None) -> str:
    """Why a call raised in one file when the cause is a callee's wrong answer in another."""
    file = f"{callee.module}.py"
    if callee.shape is not None:
        expected = tuple(getattr(callee.reference, "shape", ()))
        cause = _(messages.UPSTREAM_SHAPE).format(function=callee.name, file=file, got=callee.shape, expected=expected)
    elif callee.dtype is not None:
        expected = str(getattr(callee.reference, "dtype", "?"))
        cause = _(messages.UPSTREAM_DTYPE).format(function=callee.name, file=file, got=callee.dtype, expected=expected)
    else:
        cause = upstream([callee])
    return _(messages.RAISED_LATER).format(cause=cause, raised=raised) if raised else cause


def unfollowed(truncated: bool) -> str:
    """The honest note when the computation could not be followed."""
    why = messages.WHY_TRUNCATED if truncated else messages.WHY_UNTRACED
    return _(messages.UNFOLLOWED).format(why=_(why))
