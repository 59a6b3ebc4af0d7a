"""`python3 -m take5_arena`: the `referee` command, through its entry point."""

from take5_arena.cli.entry import main

main()
