"""Ctrl-C in a child process, the suite's shared harness: the child prints "running" before its
long call and "interrupted" in its KeyboardInterrupt handler, then whatever lines it checks
afterwards, and exits with status 3."""
import os
import signal
import subprocess
import sys
import time


def interrupt(code, lines_after=0):
    """Runs `code` in a child Python (one OpenMP thread), sends SIGINT 0.5 s after its "running",
    and returns the seconds from the signal to its "interrupted" (to the handler, not the
    interpreter's exit) and the `lines_after` lines it prints next."""
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                         env=os.environ | {"OMP_NUM_THREADS": "1"})
    assert p.stdout.readline().strip() == "running"
    time.sleep(0.5)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    assert p.stdout.readline().strip() == "interrupted"
    took = time.monotonic() - sent
    after = [p.stdout.readline().strip() for _ in range(lines_after)]
    p.communicate(timeout=20)
    assert p.returncode == 3
    return took, after
