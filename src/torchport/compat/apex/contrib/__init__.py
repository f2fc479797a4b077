"""Ascend apex's apex.contrib: what ModelZoo's own fused optimizers import from it."""
