"""An editor simulator: another program saving a note the two ways real editors do.

- **in place** (truncate, then write): what Node's `fs.writeFile` does, and so Obsidian;
  between the truncate and the write the file is empty (or partly written);
- **by rename**: write a temp file beside the note, then rename it over the note (vim,
  VS Code, most sync tools).

Run as a program (the tests start it as a real process):

    python -m tests.editor_sim hold FILE LINE       # truncate, print "truncated", wait for a
                                                    # line on stdin, then write the old bytes
                                                    # plus LINE; print "saved"
    python -m tests.editor_sim trickle FILE LINE S  # truncate, then write the new bytes one
                                                    # at a time over S seconds; print "saved"
    python -m tests.editor_sim storm FILE TAG S     # for S seconds: add "- TAG edit N" lines,
                                                    # saving half in place, half by rename;
                                                    # print each confirmed line

A careful editor reloads a file that changed on disk before saving over it; the storm mode
does the same (it re-reads right before each save and starts again if the file moved), so
what it saves is never knowingly stale. The instant between that last check and its own
truncate or rename remains, exactly as in a real editor.
"""

from __future__ import annotations

import os
import random
import sys
import time


def save_in_place(path: str, data: bytes, pause: float = 0.0) -> None:
    with open(path, "wb") as fh:  # O_TRUNC first, like fs.writeFile
        if pause:
            time.sleep(pause)  # the file is empty meanwhile
        fh.write(data)


def save_by_rename(path: str, data: bytes) -> None:
    tmp = f"{path}.editor-{os.getpid()}.tmp"
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _snapshot(path: str) -> tuple[bytes, tuple[int, int, int]]:
    with open(path, "rb") as fh:
        st = os.fstat(fh.fileno())
        return fh.read(), (st.st_ino, st.st_size, st.st_mtime_ns)


def hold(path: str, line: str) -> None:
    with open(path, "rb") as fh:
        old = fh.read()
    fh = open(path, "wb")  # noqa: SIM115 - held open across the pause on purpose
    print("truncated", flush=True)
    sys.stdin.readline()
    fh.write(old + line.encode() + b"\n")
    fh.close()
    print("saved", flush=True)


def trickle(path: str, line: str, seconds: float) -> None:
    with open(path, "rb") as fh:
        new = fh.read() + line.encode() + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    print("truncated", flush=True)
    step = seconds / len(new)
    for i in range(len(new)):
        os.write(fd, new[i:i + 1])
        time.sleep(step)
    os.close(fd)
    print("saved", flush=True)


def storm(path: str, tag: str, seconds: float) -> None:
    rng = random.Random(f"{tag}-{os.getpid()}")
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        line = f"- {tag} edit {n}\n".encode()
        while True:
            data, ident = _snapshot(path)
            time.sleep(rng.uniform(0.0, 0.01))  # the user typing
            if _snapshot(path)[1] != ident:
                continue  # changed on disk: reload, type again
            new = data + (b"" if data.endswith(b"\n") or not data else b"\n") + line
            if rng.random() < 0.5:
                save_in_place(path, new, pause=rng.uniform(0.0, 0.02))
            else:
                save_by_rename(path, new)
            break
        print(line.decode().strip()[2:], flush=True)
        n += 1
        time.sleep(rng.uniform(0.02, 0.1))


def main(argv: list[str]) -> None:
    mode, path = argv[0], argv[1]
    if mode == "hold":
        hold(path, argv[2])
    elif mode == "trickle":
        trickle(path, argv[2], float(argv[3]))
    elif mode == "storm":
        storm(path, argv[2], float(argv[3]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
