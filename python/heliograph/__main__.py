"""``python -m heliograph`` and the ``heliograph`` command of the wheel: the same
command line as the Rust binary (``heliograph::cli``), run inside this process."""

import signal
import sys
import threading
from typing import List, Optional

from . import _native


def main(argv: Optional[List[str]] = None) -> int:
    """Runs ``heliograph ARGS...`` (``argv`` defaults to ``sys.argv[1:]``) and returns
    its exit code: 0, 1 on an error, 2 on a usage error."""
    args = sys.argv[1:] if argv is None else argv
    if threading.current_thread() is not threading.main_thread():
        return int(_native._cli_main(["heliograph", *args]))
    # The render runs in Rust without returning to the interpreter, so Python's SIGINT
    # handler (it only sets a flag) would leave Ctrl-C unanswered until the render ends;
    # the default action stops the process at once, as it stops the Rust binary.
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        return int(_native._cli_main(["heliograph", *args]))
    finally:
        signal.signal(signal.SIGINT, previous)


if __name__ == "__main__":
    sys.exit(main())
