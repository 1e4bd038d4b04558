"""The pure core: records, the line model, the bullet grammar and the rules.

Nothing in this package performs I/O or imports an adapter (backends, CLI, index).
"""
