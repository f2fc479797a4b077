"""Report writers every command shares: CSV in the columns Ascend's tools use, and JSON."""
