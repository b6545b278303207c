"""How long `esqlog calibrate --timeout T` waits for a cluster that never answers.

    python -m scripts.bench.timeout_wait --timeouts 0.5,2,5

A local socket accepts connections and never answers (a hung proxy, a stopped JVM that
still holds its port). For each T the real CLI runs in its own process; the script prints
the wall clock of the run and how many connections it opened. --timeout bounds the wait
for each request, so the wall clock should be about T (plus interpreter start-up) and one
connection; before the client's retries were turned off it was 4 T and 4 connections (the
client re-sent a timed-out request three times).
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import threading
import time


def silent_server() -> tuple[socket.socket, list[socket.socket], threading.Event]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    sock.settimeout(0.1)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                accepted.append(sock.accept()[0])
            except OSError:
                continue

    threading.Thread(target=serve, daemon=True).start()
    return sock, accepted, stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--timeouts", default="0.5,2,5", help="comma-separated seconds")
    args = parser.parse_args()
    code = "import sys; from esqlog.cli import main; sys.exit(main(prog_name='esqlog'))"
    print(f"{'--timeout':>10}  {'wall s':>7}  {'connections':>11}  exit")
    for timeout in [float(t) for t in args.timeouts.split(",")]:
        sock, accepted, stop = silent_server()
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        started = time.monotonic()
        run = subprocess.run(
            [
                sys.executable,
                "-c",
                code,
                "calibrate",
                "--url",
                url,
                "--index",
                "code",
                "--field",
                "body",
                "--timeout",
                str(timeout),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.monotonic() - started
        stop.set()
        time.sleep(0.2)
        print(f"{timeout:>10g}  {elapsed:>7.2f}  {len(accepted):>11}  {run.returncode}")
        for conn in accepted:
            conn.close()
        sock.close()


if __name__ == "__main__":
    main()
