"""Running, resuming and reading runs: the runner, lanes, the ledger, interactions."""
