"""bench/ -- the benchmark runner as a package; bench/run.py starts it
(see its docstring for what a run does and which module owns what).
"""
