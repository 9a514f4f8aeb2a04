"""Running turns for API clients: recording events, the run lifecycle, cancellation and crash recovery."""
