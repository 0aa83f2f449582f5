"""Copied into every attack submission as ``_attempts.py``: run attempts, report each result in one short line.

Each attempt is ``name=ok:<value>`` when it worked, or ``name=<code>`` with the exception's initials when it
failed (``PE`` PermissionError, ``SV`` SandboxViolation, ``FNFE`` FileNotFoundError, ...): short, so that all of
them fit in one exception message (the sandbox keeps 500 characters of it).
"""

RESULTS = []


def _code(error):
    return "".join(c for c in type(error).__name__ if c.isupper()) or type(error).__name__[:4]


def attempt(name, function):
    try:
        value = function()
    except BaseException as error:
        RESULTS.append(f"{name}={_code(error)}")
    else:
        RESULTS.append(f"{name}=ok:{str(value)[:40]}")


def summary():
    text = "ATTACK " + " ".join(RESULTS)
    RESULTS.clear()
    return text
