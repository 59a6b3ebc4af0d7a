"""Playing a plan: one table's games (table, the unit of work, on the data of spec), the loop that
plays the tables of a schedule (driver), where they are played (executors), how their bots'
archives reach the workers (shipping for the referee's half, archives for the worker's), the Docker
launchers of a process (launchers, which load the Docker SDK only for a seat that plays in Docker)
and what a Dask worker runs beside the tables (workers: the engine sweep; worker_metrics).

The modules import one another in one direction only, with no loop (tests/test_architecture.py):
spec and archives at the bottom, then shipping, launchers and table, then workers and executors,
then driver.
"""
