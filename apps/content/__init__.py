"""Authored course material: courses, lessons, decks, questions, exercises, concepts, scenes."""
