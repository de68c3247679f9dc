"""Configuration of the claim checks: the claims-report plugin (see theory.pytest_plugin)."""

pytest_plugins = ["theory.pytest_plugin"]
