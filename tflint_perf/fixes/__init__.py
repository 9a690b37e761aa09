"""Fixes: building edits that rules return, applying them to text, atomic writes. Imports analysis and text only."""
