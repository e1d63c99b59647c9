"""The one exception type a script turns into a clean one-line message, and how any exception becomes one line."""


class UserError(Exception):
    """Bad input from the user (config, paths, files): print it, exit 2, no traceback."""


def first_line(exc: BaseException) -> str:
    """`Type: first line of the message`, at most 500 characters of it."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0][:500] if text else ''}".rstrip(": ")
