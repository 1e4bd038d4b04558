"""A stand-in for Windows' `msvcrt.locking`, so the Windows branch of the vault lock runs
(and is raced) here.

It follows the documented behaviour: `locking(fd, mode, nbytes)` locks `nbytes` bytes from
the file's current position; `LK_NBLCK` fails at once with OSError if another process
holds them; `LK_LOCK` tries ten times, pausing between tries (one second on Windows, a
few milliseconds here), then fails with OSError(EDEADLOCK); `LK_UNLCK` unlocks. The
exclusion between processes is real: POSIX record locks (`fcntl.lockf`) on those bytes.

`install()` puts it in `sys.modules` as `msvcrt` and makes `import fcntl` fail, as on
Windows. `failures` counts the LK_LOCK calls that gave up (so a test can see the retry
path of the caller was exercised).
"""

from __future__ import annotations

import errno
import os
import sys
import time
import types

LK_UNLCK, LK_LOCK, LK_NBLCK, LK_RLCK, LK_NBRLCK = 0, 1, 2, 3, 4
PAUSE = 0.002
failures = 0


def install() -> types.ModuleType:
    import fcntl as real

    def locking(fd: int, mode: int, nbytes: int) -> None:
        global failures
        start = os.lseek(fd, 0, os.SEEK_CUR)
        if mode == LK_UNLCK:
            real.lockf(fd, real.LOCK_UN, nbytes, start, os.SEEK_SET)
            return
        tries = 10 if mode in (LK_LOCK, LK_RLCK) else 1
        for attempt in range(tries):
            try:
                real.lockf(fd, real.LOCK_EX | real.LOCK_NB, nbytes, start, os.SEEK_SET)
                return
            except OSError:
                if attempt + 1 < tries:
                    time.sleep(PAUSE)
        failures += 1
        raise OSError(errno.EDEADLOCK, "Resource deadlock avoided")

    module = types.ModuleType("msvcrt")
    module.LK_UNLCK, module.LK_LOCK, module.LK_NBLCK = LK_UNLCK, LK_LOCK, LK_NBLCK
    module.LK_RLCK, module.LK_NBRLCK = LK_RLCK, LK_NBRLCK
    module.locking = locking  # type: ignore[attr-defined]
    sys.modules["msvcrt"] = module
    sys.modules["fcntl"] = None  # type: ignore[assignment]  # `import fcntl` -> ImportError
    return module
