"""A reference model of the registry and a Hypothesis state machine that holds the real handlers to it.

spec.py, guards.py, retention.py (composed in registry.py): the contract, in memory; machine.py: the rules
(requests) and the settling of each answer; invariants.py: what is checked in the table and the bucket after
every step; pending.py: the contract rules the code does not keep yet; profiles.py: how many examples.
"""
