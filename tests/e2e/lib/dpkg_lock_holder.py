#!/usr/bin/env python3
"""Hold dpkg's frontend lock and database lock the way apt/dpkg do (fcntl write locks) for N
seconds, like unattended-upgrades on a first boot. usage: dpkg_lock_holder.py ROOT SECONDS READYFILE"""
import fcntl
import os
import sys
import time

root, seconds, ready = sys.argv[1], float(sys.argv[2]), sys.argv[3]
fds = []
for name in ("lock-frontend", "lock"):
    fd = os.open(os.path.join(root, "var/lib/dpkg", name), os.O_RDWR | os.O_CREAT, 0o640)
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    fds.append(fd)
with open(ready, "w", encoding="utf-8") as f:
    f.write(f"{os.getpid()}\n")
time.sleep(seconds)
for fd in fds:
    os.close(fd)
