"""`python3 -m referee.cli`: the `referee` command, which lives in the app layer (arena/entry.py).

Kept so that scripts and tests calling ``python3 -m referee.cli`` go on working; the one place in
referee/ that imports the app layer (tests/test_architecture.py allows exactly this file).
"""

from arena.entry import main

if __name__ == "__main__":
    main()
