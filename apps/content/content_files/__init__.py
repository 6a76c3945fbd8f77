"""Course files in decks/: parse, validate, load into the database and export back."""
