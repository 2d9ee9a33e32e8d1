"""User-facing errors: reported as one line, never as a traceback."""


class UserError(Exception):
    """Bad input from the user (config, transcript file, option).

    The message must name the file, field or option at fault; ``__main__``
    prints it on one line and exits non-zero.
    """


class JobFailed(Exception):
    """The job ran and was logged, but too many probes failed (``execution.fail_on_error``);
    ``__main__`` prints the one-line reason and exits 1."""
