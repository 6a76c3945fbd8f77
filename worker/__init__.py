"""Grading side: runs learners' pipelines in a sandbox. Imports nothing from Django."""
