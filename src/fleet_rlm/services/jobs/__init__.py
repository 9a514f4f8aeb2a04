"""One durable job system for turns and optimization runs: claim with an owner, heartbeat (which also picks up
durable cancel requests), progress published on the live bus, and a sweeper that marks dead jobs interrupted."""
