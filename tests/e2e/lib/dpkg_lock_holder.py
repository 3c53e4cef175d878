#!/usr/bin/env python3
"""Hold dpkg's frontend lock and database lock the way apt/dpkg do (fcntl write locks), like
unattended-upgrades on a first boot, until told to let go: SIGTERM or SIGINT releases them and
exits 0. Never longer than MAX_SECONDS (a backstop for a scenario that died; it then exits 1).
usage: dpkg_lock_holder.py ROOT READYFILE MAX_SECONDS"""
import fcntl
import os
import signal
import sys

root, ready, max_seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])
# Blocked before anything else, then waited for: a release asked for at any moment (even before
# the ready file exists) is pending, never lost.
RELEASE = {signal.SIGTERM, signal.SIGINT}
signal.pthread_sigmask(signal.SIG_BLOCK, RELEASE)
fds = []
for name in ("lock-frontend", "lock"):
    fd = os.open(os.path.join(root, "var/lib/dpkg", name), os.O_RDWR | os.O_CREAT, 0o640)
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fds.append(fd)
with open(ready, "w", encoding="utf-8") as f:
    f.write(f"{os.getpid()}\n")
got = signal.sigtimedwait(RELEASE, max_seconds)
for fd in fds:
    os.close(fd)
sys.exit(0 if got is not None else 1)
