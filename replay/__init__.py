"""canasta-replay: audit, step through, annotate and export canasta-net game logs."""
