"""bench/ -- the benchmark runner as a package; bench/run.py is its command
(see its docstring for what a run does and which module owns what).
"""
