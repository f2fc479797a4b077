"""The source rewriter: `migrate_source` for one file, `migrate_tree` for a file or a tree."""

from torchport.migrate.source import FileResult, migrate_source

__all__ = ["FileResult", "migrate_source"]
