"""Hostile SDK bot: from its second PickCard on, allocates memory without end (until the container
is OOM-killed). Expected: a `resource` fault naming OOMKilled, the memory limit and exit code 137.
"""

from take5 import Bot, run


class Hog(Bot):
    name = "hostile_oom"
    version = "1"

    def __init__(self) -> None:
        self.calls = 0
        self.hoard: list[bytes] = []

    def pick_card(self, view):
        self.calls += 1
        if self.calls >= 2:
            print("eating memory", flush=True)
            while True:
                self.hoard.append(b"\1" * (1 << 20))  # touched pages, not a lazy calloc
        return min(view.hand)


if __name__ == "__main__":
    run(Hog())
