"""The crawl's web archive: WARC/1.1 files written by the master from the
exchanges workers send (see docs/operations/archives.md)."""
