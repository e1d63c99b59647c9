"""The one exception type a script turns into a clean one-line message."""


class UserError(Exception):
    """Bad input from the user (config, paths, files): print it, exit 2, no traceback."""
