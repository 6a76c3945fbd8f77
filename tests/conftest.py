"""The suite's shared fixtures live in tests/support, with the helpers test modules import."""

pytest_plugins = ["tests.support.fixtures"]
