"""The attack suite: submissions a hostile student could write, and what the grader must still guarantee."""
