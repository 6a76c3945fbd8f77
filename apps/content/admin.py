"""Admin for content (filled in below)."""
