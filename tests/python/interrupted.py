"""Ctrl-C in a child process, the suite's shared harness: the child prints "running" before its
long call and "interrupted" in its KeyboardInterrupt handler, then whatever lines it checks
afterwards, and exits with status 3."""
import os
import signal
import subprocess
import sys
import threading
import time

# The child is killed this long after it starts if it has not finished: a stop that never comes
# fails the test instead of running the child's long call to its end.
WATCHDOG_S = 30


def interrupt(code, lines_after=0):
    """Runs `code` in a child Python (one OpenMP thread), sends SIGINT 0.5 s after its "running",
    and returns the seconds from the signal to its "interrupted" (to the handler, not the
    interpreter's exit) and the `lines_after` lines it prints next. The child is killed if it is
    still running when the test ends, or WATCHDOG_S after it started."""
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         env=os.environ | {"OMP_NUM_THREADS": "1"})
    watchdog = threading.Timer(WATCHDOG_S, p.kill)
    watchdog.start()
    try:
        assert p.stdout.readline().strip() == "running"
        time.sleep(0.5)
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        assert p.stdout.readline().strip() == "interrupted"
        took = time.monotonic() - sent
        after = [p.stdout.readline().strip() for _ in range(lines_after)]
        p.communicate()
    finally:
        watchdog.cancel()
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 3
    return took, after
