"""Checks that a step's public and hidden graders share (the graders differ in their inputs, not in what they
expect)."""
