"""GPU suite (cuda_rgb). A package, so that its conftest does not shadow ../conftest.py."""
