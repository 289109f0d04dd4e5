"""The table: the host's authoritative table, the seat agent, the seat lifecycle, the table's setup
and the local table (sans-io).
"""
