"""Learner and staff accounts: API tokens and the demo users of a development install."""
