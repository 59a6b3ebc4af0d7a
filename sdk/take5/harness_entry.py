"""The `take5-harness` command's entry point: nothing but a guard around the harness's import.

Importing the harness loads grpc and protobuf, which takes a noticeable moment; a Ctrl-C then must
end the command quietly (exit 130), not with a traceback of import machinery.
"""

from __future__ import annotations

import sys


def main() -> int:
    try:
        from .harness import main as harness_main  # lazy: a Ctrl-C while grpc loads is caught here

        return harness_main()
    except KeyboardInterrupt:
        print("take5-harness: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
