"""Does it hold on this instance, and how tight: verdicts, campaigns, store, reports, CLI."""
