"""Execution modes of a turn: the router that picks one, and direct, tools and rlm, each returning a `ModeOutcome`."""
