"""Repository functions: keyword-only, take an AsyncSession, flush but never commit.

The caller owns the transaction (`async with db.transaction() as s:`), so several repository calls can form
one atomic unit. One module per aggregate; later features add their own modules here.
"""
