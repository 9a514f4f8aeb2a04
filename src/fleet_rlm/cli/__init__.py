"""Typer commands. Thin: each calls api, runtime or store functions and prints one-line errors."""
