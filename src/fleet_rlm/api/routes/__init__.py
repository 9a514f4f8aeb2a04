"""One router module per resource; each route parses, authorizes, calls one function and shapes the reply."""
