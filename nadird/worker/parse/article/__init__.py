"""The generic fields of an article page (`article: true` on a job): the
engine's main text and metadata, dates, language and the page's kind."""
