"""Checking: configuration, discovery, the engine (one text), the workspace, the cache and the runner."""
