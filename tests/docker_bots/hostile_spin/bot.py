"""Hostile SDK bot: spins the CPU without end in its second PickCard. Expected: `timeout` faults,
then a forfeit; the CPU quota keeps a core for everybody else."""

from take5 import Bot, run


class Spinner(Bot):
    name = "hostile_spin"
    version = "1"
    calls = 0

    def pick_card(self, view):
        self.calls += 1
        if self.calls >= 2:
            print("spinning", flush=True)
            n = 0
            while True:
                n += 1
        return min(view.hand)


if __name__ == "__main__":
    run(Spinner())
