"""WebSocket surfaces: `/api/v1/ws/execution` (start, cancel, commands) and `/api/v1/ws/execution/events`."""
