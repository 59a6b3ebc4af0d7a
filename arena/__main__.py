"""`python3 -m arena`: the `referee` command."""

from .cli import main

main()
