"""The commands and the terminal client."""
