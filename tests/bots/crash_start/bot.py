"""Crashes before it serves (a typo in a bot file, say)."""

import sys

print("crash_start: cannot start, missing weights.bin", file=sys.stderr)
sys.exit(1)
