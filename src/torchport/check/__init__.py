"""`torchport check`: what a migration would change, listed as a linter lists findings."""
