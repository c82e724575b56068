"""The Markdown files the doc tests read: README.md, then docs/*.md by name."""
import os


def doc_files(src):
    docs = os.path.join(src, 'docs')
    return [os.path.join(src, 'README.md')] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith('.md'))
