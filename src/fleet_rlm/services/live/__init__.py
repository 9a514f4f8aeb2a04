"""Live delivery of run events: persist-then-publish, in-process and cross-replica buses, gap-free following."""
