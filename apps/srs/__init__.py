"""Spaced repetition: learners' memory of cards, reviews, the study queue, scores and statistics."""
