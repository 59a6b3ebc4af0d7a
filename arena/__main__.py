"""`python3 -m arena`: the `referee` command, through its entry point."""

from .entry import main

main()
