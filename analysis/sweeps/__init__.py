"""Sweeps: accuracy against epsilon over a grid or a dataset's real inputs, and their up-front cost."""
