"""Does it hold on this instance, and how tight: verdicts, campaigns, store, reports, CLI.

Importing it changes nothing in the process: the command line pins the numerics
(:func:`numerics.pins.pin`, in :func:`verification.cli.main`) before anything loads torch or numba.
"""
