"""Run every benchmark script: each ``benchmarks/bench_*.py`` and ``compare.py``.

    python benchmarks/run_all.py --quick    # smoke run: do they all execute? (< 2 min)
    python benchmarks/run_all.py            # full sizes (long)

Each script is an argparse script run in its own process with the same
Python, with ``--quick`` passed through. The quick mode checks that the
scripts run, not how fast they are. The exit status is non-zero if any
script fails (non-zero exit or timeout); a summary names each script, its
status and its wall time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def scripts() -> list[Path]:
    """The bench_*.py scripts (sorted) followed by compare.py."""
    return [*sorted(HERE.glob("bench_*.py")), HERE / "compare.py"]


def run(script: Path, quick: bool, timeout: float) -> tuple[bool, float, str]:
    """Run one script; (ok, seconds, last lines of its output)."""
    cmd = [sys.executable, str(script), *(["--quick"] if quick else [])]
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=HERE.parent, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return False, time.perf_counter() - start, f"timed out after {timeout:g} s\n{out[-2000:]}"
    seconds = time.perf_counter() - start
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        return False, seconds, f"exit status {proc.returncode}\n{text[-4000:]}"
    return True, seconds, proc.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run of every script")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per script (default 180 with --quick, none otherwise)")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    args = parser.parse_args(argv)
    timeout = args.timeout if args.timeout is not None else (180.0 if args.quick else None)
    failed = []
    summary = []
    for script in scripts():
        ok, seconds, output = run(script, args.quick, timeout)  # type: ignore[arg-type]
        summary.append(f"{'ok  ' if ok else 'FAIL'} {script.name:24s} {seconds:6.1f} s")
        if not args.quiet or not ok:
            print(f"===== {script.name} ({'ok' if ok else 'FAILED'}, {seconds:.1f} s)")
            print(output.rstrip())
        if not ok:
            failed.append(script.name)
    print("\n".join(["===== summary", *summary]))
    if failed:
        print(f"failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
