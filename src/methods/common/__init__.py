"""Pieces shared by every paper: IO, seeding, plotting, claims and verdicts, reports."""
