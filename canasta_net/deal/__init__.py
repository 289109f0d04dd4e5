"""How a hand's deck comes to be: the commit-reveal shuffle and the host-blind deal's cryptography
(sans-io).
"""
