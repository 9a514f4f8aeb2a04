"""Response and request models: the shapes openapi.yaml publishes. Built from store rows via `from_attributes`."""
