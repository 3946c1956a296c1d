"""Optimal-transport solvers shared by the methods (private)."""
