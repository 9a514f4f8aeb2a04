"""Domain operations the surfaces (HTTP API, CLI, MCP) share: turns and their job system, live delivery,
profiles and LM resolution, preferences, status, attachments, volume, export, sandbox leases.

No HTTP here: services take settings, a database and plain arguments, return domain values and raise
`FleetError`s; `fleet_rlm.api` parses, authorizes, calls one service function and shapes the response.
"""
