"""Running meterbook in a child process with a fault at its n-th write (core/atomic.py's
MB_FAULT_WRITES) or under a file size limit: the machine failing, deterministically."""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from core.atomic import FAULT_ENV

ROOT = Path(__file__).resolve().parents[1]


def run_child(args: list[str], fault: str | None = None, file_size_limit: int | None = None) -> subprocess.CompletedProcess:
    """A child in its own process group (a `kill` fault kills the group, never the test runner);
    with file_size_limit, a write past that many bytes fails with EFBIG as a full disk would fail."""
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV} | ({FAULT_ENV: fault} if fault else {})

    def limit() -> None:
        if file_size_limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # the write fails instead of killing
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))
    return subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, start_new_session=True,
                          preexec_fn=limit)


def meterbook(*args: str | Path, fault: str | None = None, file_size_limit: int | None = None) -> subprocess.CompletedProcess:
    return run_child([sys.executable, "-m", "pipelines.cli", *map(str, args)], fault, file_size_limit)
