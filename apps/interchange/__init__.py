"""Decks in and out of other tools: Anki packages and CSV/TSV files."""
